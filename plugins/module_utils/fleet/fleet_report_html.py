# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's page: one HTML file that opens from disk (no network fetch) with the fleet's summary - the
overview, the worst nodes, the drift groups - and a node found by name.

The summary is one compact JSON document in a <script type="application/json">, with the first host of each chunk of
the data file beside the page (<name>_data.js: each chunk of CHUNK nodes packed column by column, raw-deflated and base64'd in a call
of fleetChunk). The data file is loaded (a <script src>, which a page opened from disk may load) when a node is first
looked up, and a chunk decoded (DecompressionStream) only when a node of it is opened: the page opens in the time of
its summary, whatever the fleet's size. Every value reaches the page through textContent or SVG attributes set by
DOM calls, never as markup.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import html

CSS = u"""
body{font-family:system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#1f3a5f;color:#fff;padding:10px 18px}h1{font-size:20px;margin:0}
main{padding:12px 18px}.cards{display:flex;flex-wrap:wrap;gap:10px}.card{background:#fff;border:1px solid #d0d5dd;
border-radius:6px;padding:8px 12px;min-width:150px}.card b{display:block;font-size:22px}
.plots{display:flex;flex-wrap:wrap;gap:16px;margin:12px 0}.plot{background:#fff;border:1px solid #d0d5dd;
border-radius:6px;padding:6px}table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid #d0d5dd;padding:3px 6px;text-align:left}th{background:#e9edf2;cursor:pointer;
user-select:none}tr.node:hover{background:#eef4ff;cursor:pointer}.s-error{color:#b42318;font-weight:600}
.s-warning,.s-stale{color:#b54708;font-weight:600}.s-drift{color:#175cd3}.s-ok{color:#067647}
.s-missing{color:#667085;font-weight:600}.controls{margin:10px 0;display:flex;gap:8px;align-items:center}
#detail{background:#fff;border:1px solid #98a2b3;border-radius:6px;padding:10px;margin-top:12px}
.sev-error{color:#b42318}.sev-warning{color:#b54708}.sev-info{color:#475467}.muted{color:#667085}
.drift{background:#fff4e5}
"""

JS = u"""
(function(){
'use strict';
var H=JSON.parse(document.getElementById('fleet-data').textContent);
var KEYS=H.row_keys, C=H.chunks;
var SVGNS='http://www.w3.org/2000/svg';
function el(tag,text,cls){var e=document.createElement(tag);if(text!==undefined&&text!==null)e.textContent=String(text);
 if(cls)e.className=cls;return e;}
function svg(tag,attrs,text){var e=document.createElementNS(SVGNS,tag);for(var k in attrs)e.setAttribute(k,attrs[k]);
 if(text!==undefined)e.textContent=String(text);return e;}
function fmt(v){return v===null||v===undefined?'\u2013':(typeof v==='number'?(Math.round(v*1000)/1000):String(v));}
function cards(){
 var f=H.fleet, box=document.getElementById('cards');
 function card(label,value){var c=el('div',null,'card');c.appendChild(el('b',value));c.appendChild(el('span',label));
  box.appendChild(c);}
 card('nodes',f.nodes);card('data drives',f.drives);
 Object.keys(f.status).sort().forEach(function(k){card('status '+k,f.status[k]);});
 ['error','warning','info'].forEach(function(s){card('findings: '+s,f.findings[s]);});
 Object.keys(f.gds_paths).sort().forEach(function(k){card('GDS path: '+k,f.gds_paths[k]);});
 card('nodes with drift',f.drift_nodes);card('outliers (< '+Math.round(f.outlier_fraction*100)+'% of median)',f.outliers);
 card('median bandwidth GiB/s',fmt(f.bandwidth_median_gib_s));card('throttled drives',f.throttled_drives);
 var p=document.getElementById('plan');
 if(H.plan){p.textContent='Checkpoint plan: '+(H.plan.line||H.plan.error);}
 var c=document.getElementById('changes');
 if(H.changes){c.textContent='Since '+H.changes.previous_generated_at+': '+H.changes.new_nodes.length+' new, '+
  H.changes.gone_nodes.length+' gone, '+H.changes.changed.length+' changed ('+
  H.changes.changed.slice(0,10).map(function(x){return x.host+' '+x.status_before+'\u2192'+x.status;}).join(', ')+')';}
 bars(document.getElementById('bwplot'),f.bandwidth_histogram,'checkpoint bandwidth (GiB/s)');
 bars(document.getElementById('tplot'),f.temperature_histogram,'hottest drive per node (\u00b0C)');
}
function bars(host,hist,label){
 var W=360,Hh=170,s=svg('svg',{width:W,height:Hh,role:'img'});s.appendChild(svg('title',{},label));
 s.appendChild(svg('text',{x:6,y:14,'font-size':12},label));
 if(!hist.length){s.appendChild(svg('text',{x:6,y:60,'font-size':12},'no data'));host.appendChild(s);return;}
 var max=Math.max.apply(null,hist.map(function(b){return b[2];})),bw=(W-40)/hist.length;
 hist.forEach(function(b,i){var h=max?(b[2]/max)*(Hh-60):0;
  var r=svg('rect',{x:30+i*bw,y:Hh-30-h,width:bw-2,height:h,fill:'#3e6ea8'});
  r.appendChild(svg('title',{},fmt(b[0])+'\u2013'+fmt(b[1])+': '+b[2]));s.appendChild(r);});
 s.appendChild(svg('text',{x:30,y:Hh-12,'font-size':11},fmt(hist[0][0])));
 s.appendChild(svg('text',{x:W-60,y:Hh-12,'font-size':11},fmt(hist[hist.length-1][1])));
 host.appendChild(s);
}
var COLS=[['host','node'],['status','status'],['data_drives','drives'],['gds','GDS path'],['temp_max_c','max \u00b0C'],
 ['throttled','throttled'],['bw_before','before GiB/s'],['bw_after','after GiB/s'],['ratio','ratio'],['errors','errors'],
 ['warnings','warnings'],['drifted','drift'],['outlier','outlier'],['compression_ratio','compression'],
 ['run_written_gib','run wrote GiB'],['age_h','age h']];
function rowTable(t,rows){
 t.textContent='';var head=el('tr');COLS.forEach(function(c){head.appendChild(el('th',c[1]));});
 var thead=el('thead');thead.appendChild(head);t.appendChild(thead);var tb=el('tbody');
 rows.forEach(function(r){var tr=el('tr',null,'node');
  COLS.forEach(function(c){var td=el('td',c[0]==='outlier'?(r.outlier?'yes':''):fmt(r[c[0]]));
   if(c[0]==='status')td.className='s-'+r.status;tr.appendChild(td);});
  tr.addEventListener('click',function(){find(r.host);});tb.appendChild(tr);});
 t.appendChild(tb);
}
function worst(){
 rowTable(document.getElementById('worst'),H.worst);
 document.getElementById('worstinfo').textContent=H.worst_count?('the '+H.worst.length+' worst of '+H.worst_count+
  ' nodes with an error, a warning or drift'):'no node has an error, a warning or drift';
}
function drift(){
 var t=document.getElementById('drift'),D=H.drift;t.textContent='';
 var head=el('tr');['nodes','drifted settings','found \u2192 target','nodes, first of them'].forEach(function(x){
  head.appendChild(el('th',x));});t.appendChild(head);
 D.groups.forEach(function(g){var tr=el('tr',null,'group');tr.appendChild(el('td',g.nodes));
  tr.appendChild(el('td',g.drifted_settings));var what=el('td');
  g.settings.forEach(function(s){what.appendChild(el('div',s.layer+' '+s.setting+': '+s.found+' \u2192 '+s.target));});
  tr.appendChild(what);var hosts=el('td');
  g.hosts.forEach(function(h){var a=el('button',h,'host');a.addEventListener('click',function(){find(h);});
   hosts.appendChild(a);});tr.appendChild(hosts);t.appendChild(tr);});
 document.getElementById('driftinfo').textContent=D.groups.length?(D.signatures+' ways of drifting over '+
  H.fleet.drift_nodes+' nodes'+(D.other_nodes?' ('+D.other_nodes+' nodes in ways past the first '+D.signatures+
  ')':'')+'; the largest '+D.groups.length+' below'):'no node has drifted';
}
var CHUNKS={},DECODED={},OUTLIERS={},loading=null;
window.fleetChunk=function(n,b64){CHUNKS[n]=b64;};
window.fleetOutliers=function(list){list.forEach(function(i){OUTLIERS[i]=true;});};
function data(){
 if(loading)return loading;
 loading=new Promise(function(ok,fail){var s=document.createElement('script');s.src=C.file;
  s.onload=function(){ok();};s.onerror=function(){fail(new Error('the data file '+C.file+
   ' beside the page could not be loaded'));};document.body.appendChild(s);});
 return loading;
}
function chunk(n){
 if(DECODED[n])return DECODED[n];
 var b64=CHUNKS[n];if(b64===undefined)return Promise.reject(new Error('chunk '+n+' is not in '+C.file));
 var bin=atob(b64),u=new Uint8Array(bin.length);
 for(var i=0;i<bin.length;i++)u[i]=bin.charCodeAt(i);
 var stream=new Blob([u]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
 DECODED[n]=new Response(stream).text().then(JSON.parse).then(function(p){return unpack(p,n*C.size);});
 return DECODED[n];
}
function unpack(p,first){
 // a chunk is packed column by column (fleet_report.pack_chunk): back to [[row, detail], ...], the rows as found
 // with the outliers (fleetOutliers: their index in the report) marked as fleet_report.mark_outlier does
 var out=[],dOff=0,cOff=0;
 function pick(cols,at){return cols.map(function(col){return col[at];});}
 for(var i=0;i<p.nd.length;i++){
  var d=[],c=[];
  for(var j=0;j<p.nd[i];j++)d.push(pick(p.d,dOff+j));
  for(j=0;j<p.nc[i];j++)c.push(pick(p.c,cOff+j));
  dOff+=p.nd[i];cOff+=p.nc[i];
  var r=rowOf(pick(p.r,i));
  if(OUTLIERS[first+i]){r.outlier=true;r.warnings+=1;if(r.status==='ok'||r.status==='drift')r.status='warning';}
  out.push([r,{d:d,c:c,x:p.x[i],f:p.f[i],t:p.t[i]}]);
 }
 return out;
}
function candidates(host){
 var n=C.first.length,out=[];if(!n)return out;
 if(!C.sorted){for(var i=0;i<n;i++)out.push(i);return out;}
 var lo=0,hi=n-1;while(lo<hi){var mid=(lo+hi+1)>>1;if(C.first[mid]<=host)lo=mid;else hi=mid-1;}
 return [lo];
}
function find(host){
 var msg=document.getElementById('findinfo');msg.textContent='looking for '+host+'\u2026';
 data().then(function(){
  var list=candidates(host);
  function next(k){
   if(k>=list.length){msg.textContent=host+': no such node in this report';return;}
   chunk(list[k]).then(function(nodes){
    for(var i=0;i<nodes.length;i++){var r=nodes[i][0];if(r.host===host){msg.textContent='';
     render(r,nodes[i][1]);return;}}
    next(k+1);});
  }
  next(0);
 }).catch(function(e){msg.textContent='node details could not be loaded: '+e.message;});
}
function rowOf(a){var o={};KEYS.forEach(function(k,i){o[k]=a[i];});return o;}
function grid(head,rows,rowClass){var t=el('table'),h=el('tr');head.forEach(function(x){h.appendChild(el('th',x));});
 t.appendChild(h);rows.forEach(function(r){var tr=el('tr');if(rowClass)tr.className=rowClass(r)||'';
 r.forEach(function(v){tr.appendChild(el('td',fmt(v)));});t.appendChild(tr);});return t;}
function line(title,xl,yl,series){
 var names=Object.keys(series),rows=Math.ceil(names.length/4),W=460,Hh=240,L=50,B=36;
 var s=svg('svg',{width:W,height:Hh+14*rows,role:'img'});s.appendChild(svg('title',{},title));
 s.appendChild(svg('text',{x:6,y:14,'font-size':12},title));
 var pts=[];Object.keys(series).forEach(function(k){pts=pts.concat(series[k]);});
 if(!pts.length){s.appendChild(svg('text',{x:L,y:80,'font-size':12},'not measured'));return s;}
 var xs=pts.map(function(p){return p[0];}),ys=pts.map(function(p){return p[1];});
 var x0=Math.min.apply(null,xs),x1=Math.max.apply(null,xs),y0=Math.min(0,Math.min.apply(null,ys)),y1=Math.max.apply(null,ys);
 if(x1===x0)x1=x0+1;if(y1===y0)y1=y0+1;
 function X(v){return L+(v-x0)/(x1-x0)*(W-L-10);}function Y(v){return Hh-B-(v-y0)/(y1-y0)*(Hh-B-24);}
 s.appendChild(svg('line',{x1:L,y1:Hh-B,x2:W-10,y2:Hh-B,stroke:'#667085'}));
 s.appendChild(svg('line',{x1:L,y1:24,x2:L,y2:Hh-B,stroke:'#667085'}));
 s.appendChild(svg('text',{x:L,y:Hh-20,'font-size':11},fmt(x0)));s.appendChild(svg('text',{x:W-60,y:Hh-20,'font-size':11},fmt(x1)));
 s.appendChild(svg('text',{x:2,y:Hh-B,'font-size':11},fmt(y0)));s.appendChild(svg('text',{x:2,y:30,'font-size':11},fmt(y1)));
 s.appendChild(svg('text',{x:W/2-40,y:Hh-4,'font-size':11},xl));s.appendChild(svg('text',{x:L+4,y:36,'font-size':11},yl));
 var colors=['#3e6ea8','#d9480f','#2b8a3e','#862e9c','#c92a2a','#0b7285'];
 Object.keys(series).forEach(function(k,j){var c=colors[j%colors.length];
  s.appendChild(svg('polyline',{points:series[k].map(function(p){return X(p[0])+','+Y(p[1]);}).join(' '),fill:'none',
   stroke:c,'stroke-width':2,'class':'series'}));
  series[k].forEach(function(p){var d=svg('circle',{cx:X(p[0]),cy:Y(p[1]),r:2.5,fill:c});
   d.appendChild(svg('title',{},k+': '+fmt(p[0])+', '+fmt(p[1])));s.appendChild(d);});
  s.appendChild(svg('text',{x:L+(j%4)*100,y:Hh+10+14*Math.floor(j/4),'font-size':11,fill:c,'class':'legend'},k));});
 return s;
}
function render(r,d){
 var box=document.getElementById('detail');box.textContent='';box.hidden=false;
 box.appendChild(el('h2',r.host));
 box.appendChild(el('p','status '+r.status+'; kernel '+fmt(r.kernel)+'; GDS path '+fmt(r.gds)+'; io_uring allowed '+
  fmt(r.io_uring)+'; facts gathered '+fmt(r.gathered_at)+(r.outlier?'; OUTLIER: below the fleet median':'')+
  (r.compression_ratio!==null&&r.compression_ratio!==undefined?'; compression '+fmt(r.compression_ratio)+'x ('+
  fmt(r.compression_codec)+', '+fmt(r.compression_bound)+'-bound)':'')+
  (r.run_written_gib!==null&&r.run_written_gib!==undefined?'; the last run wrote '+fmt(r.run_written_gib)+
  ' GiB to its data drives'+(r.run_rated_share!==null&&r.run_rated_share!==undefined?' (at most '+
  fmt(r.run_rated_share*100)+'% of a drive\\'s rated endurance)':'')+', reused '+fmt(r.reused)+' measurements':'')));
 box.appendChild(el('h3','Drives (every layer\\'s setting)'));
 box.appendChild(grid(['drive','serial','model','bytes','OS drive','\u00b0C','WCTEMP','throttled','scheduler',
  'nr_requests','read_ahead_kb','max_sectors_kb','nomerges','rq_affinity','I/O queues','link','drifted'],d.d,
  function(row){return row[16]?'drift':'';}));
 box.appendChild(el('h3','Drift: found vs the inventory\\'s target (what tune_checkpoint_nodes.yml would change)'));
 box.appendChild(d.x.length?grid(['layer','item','setting','found','target'],d.x):el('p','none','muted'));
 box.appendChild(el('h3','Findings'));var ul=el('ul');
 d.f.forEach(function(f){var li=el('li',null,'sev-'+f[0]);li.appendChild(el('b',f[0]+(f[1]?' '+f[1]:'')+': '));
  li.appendChild(document.createTextNode(f[2]));if(f[3])li.appendChild(el('div','fix: '+f[3],'muted'));ul.appendChild(li);});
 if(!d.f.length)ul.appendChild(el('li','none','muted'));box.appendChild(ul);
 box.appendChild(el('h3','Plots'));var plots=el('div',null,'plots');
 var curve={'bandwidth MiB/s':d.c.map(function(p){return [p[0],p[1]];})};
 var p1=el('div',null,'plot');p1.id='depth-curve';p1.appendChild(line('depth curve (sweep)','queue depth per stream','MiB/s',curve));
 var p2=el('div',null,'plot');p2.id='thermal-series';
 p2.appendChild(line('thermal series (sustained write)','s','\u00b0C',series(d.t)));
 var bw={};if(r.bw_before!==null)bw.before=r.bw_before;if(r.bw_after!==null)bw.after=r.bw_after;
 var p3=el('div',null,'plot');p3.id='bandwidth';
 p3.appendChild(bars2('checkpoint bandwidth before / after (GiB/s)',bw));
 plots.appendChild(p1);plots.appendChild(p2);plots.appendChild(p3);box.appendChild(plots);
 box.scrollIntoView();
}
function series(t){
 var out={};if(!t||!t.d)return out;
 Object.keys(t.d).forEach(function(k){var v=null,pts=[];t.d[k].forEach(function(d,i){if(d===null)return;
  v=v===null?d:v+d;pts.push([t.t[i],v]);});out[k]=pts;});
 return out;
}
function bars2(title,values){
 var W=300,Hh=200,s=svg('svg',{width:W,height:Hh,role:'img'});s.appendChild(svg('title',{},title));
 s.appendChild(svg('text',{x:6,y:14,'font-size':12},title));var keys=Object.keys(values);
 if(!keys.length){s.appendChild(svg('text',{x:20,y:80,'font-size':12},'not measured'));return s;}
 var max=Math.max.apply(null,keys.map(function(k){return values[k];}))||1;
 keys.forEach(function(k,i){var h=values[k]/max*(Hh-70);
  s.appendChild(svg('rect',{x:40+i*110,y:Hh-30-h,width:80,height:h,fill:i?'#2b8a3e':'#98a2b3'}));
  s.appendChild(svg('text',{x:40+i*110,y:Hh-12,'font-size':12},k+' '+fmt(values[k])));});
 return s;
}
document.getElementById('find').addEventListener('submit',function(e){e.preventDefault();
 var q=document.getElementById('host').value.trim();if(q)find(q);});
document.getElementById('generated').textContent='generated '+H.generated_at+(H.source?' from '+H.source:'')+
 ' \u2013 schema '+H.schema+' v'+H.schema_version;
cards();worst();drift();
})();
"""


def render(title, page_json, data_file):
    """The page: ``page_json`` (the report's summary with the chunks' index) already safe inside <script>
    (fleet_report._script_json); node details load from ``data_file`` beside it when a node is looked up."""
    parts = [u'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
             u'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
             u'script-src \'unsafe-inline\' \'self\' file:; style-src \'unsafe-inline\'; connect-src blob: data:">',
             u'<title>%s</title><style>%s</style></head><body>' % (html.escape(title), CSS),
             u'<header><h1>%s</h1><div id="generated"></div></header><main>' % html.escape(title),
             u'<section id="overview"><div class="cards" id="cards"></div><p id="plan"></p><p id="changes"></p>'
             u'<div class="plots"><div class="plot" id="bwplot"></div><div class="plot" id="tplot"></div></div>'
             u'</section>',
             u'<section><h2>Find a node</h2><form id="find" class="controls"><input id="host" type="search" '
             u'placeholder="node name" autocomplete="off"><button type="submit">show</button>'
             u'<span id="findinfo" class="muted"></span></form></section>',
             u'<section><h2>Worst nodes</h2><p id="worstinfo" class="muted"></p><table id="worst"></table></section>',
             u'<section><h2>Drift groups</h2><p id="driftinfo" class="muted"></p><table id="drift"></table></section>',
             u'<section id="detail" hidden></section></main>',
             u'<script type="application/json" id="fleet-data">%s</script>\n' % page_json,
             u'<script>%s</script></body></html>\n' % JS]
    return u''.join(parts)
