(function () {
  'use strict';
  // Run data is untrusted text: it only ever reaches the page through textContent and
  // validated attribute values, never as markup.
  var data = JSON.parse(document.getElementById('runs-data').textContent);
  var C = {};
  data.cols.forEach(function (c, i) { C[c] = i; });
  var rows = data.rows;
  var texts = data.text;
  var hay = new Array(rows.length);
  for (var i = 0; i < rows.length; i++) {
    var t = texts[i] || ['', ''];
    hay[i] = (rows[i][C.scenario] + '\n' + t[0] + '\n' + t[1]).toLowerCase();
  }
  // 25 rows keep a filter within the 100 ms target on a loaded machine (the renderer's cost is
  // about linear in the rows drawn); the menu offers more.
  var PAGE = 25;
  var PAGE_SIZES = [25, 50, 100, 200];
  var SELECTS = ['topology', 'arm', 'category', 'style', 'agent', 'model', 'pass', 'status'];
  // [column, header]; the scenario cell also shows the topology, the agent cell the model.
  var SHOWN = [
    ['scenario', 'scenario · topology'], ['arm', 'arm'], ['category', 'category'],
    ['style', 'style'], ['agent', 'agent · model'], ['pass', 'pass'],
    ['status', 'status'], ['outcome', 'outcome'], ['fix', 'fix'], ['reasoning', 'reasoning'],
    ['cost', 'USD'], ['wall', 'seconds'], ['tool_calls', 'tools'], ['record', 'run']
  ];
  var NUMERIC = { outcome: 3, fix: 1, reasoning: 3, cost: 3, wall: 0, tool_calls: 0 };
  var SAFE_PAGE = /^[A-Za-z0-9._-]+\.html$/;
  var state = { sort: null, dir: 1, page: 0, matches: [] };

  function el(id) { return document.getElementById(id); }

  function addSelect(box, name) {
    var label = document.createElement('label');
    label.textContent = name;
    var sel = document.createElement('select');
    sel.id = 'f-' + name;
    var any = document.createElement('option');
    any.value = '';
    any.textContent = '(any)';
    sel.appendChild(any);
    var seen = {};
    for (var i = 0; i < rows.length; i++) { seen[rows[i][C[name]]] = true; }
    Object.keys(seen).sort().forEach(function (v) {
      var o = document.createElement('option');
      o.value = v;
      o.textContent = v === '' ? '(blank)' : v;
      sel.appendChild(o);
    });
    sel.addEventListener('change', function () { state.page = 0; apply(); });
    label.appendChild(sel);
    box.appendChild(label);
  }

  function addInput(box, id, text, type) {
    var label = document.createElement('label');
    label.textContent = text;
    var inp = document.createElement('input');
    inp.id = id;
    inp.type = type;
    if (type === 'number') { inp.step = 'any'; }
    inp.addEventListener('input', function () { state.page = 0; apply(); });
    label.appendChild(inp);
    box.appendChild(label);
  }

  function bound(id) {
    var v = el(id).value;
    return v === '' ? NaN : parseFloat(v);
  }

  function cmp(a, b) {
    var x = rows[a][state.sort], y = rows[b][state.sort];
    var xn = x === null || x === undefined, yn = y === null || y === undefined;
    if (xn || yn) { return xn === yn ? a - b : (xn ? 1 : -1); }
    if (x < y) { return -state.dir; }
    if (x > y) { return state.dir; }
    return a - b;
  }

  function apply() {
    var t0 = performance.now();
    var want = [];
    SELECTS.forEach(function (s) {
      var v = el('f-' + s).value;
      if (v !== '') { want.push([C[s], v]); }
    });
    var terms = el('q').value.toLowerCase().split(/\s+/).filter(function (x) { return x; });
    var omin = bound('omin'), omax = bound('omax'), cmax = bound('cmax'), wmax = bound('wmax');
    var out = [];
    outer: for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      for (var k = 0; k < want.length; k++) {
        if (String(r[want[k][0]]) !== want[k][1]) { continue outer; }
      }
      var o = r[C.outcome];
      if (!isNaN(omin) && (o === null || o < omin)) { continue; }
      if (!isNaN(omax) && (o === null || o > omax)) { continue; }
      if (!isNaN(cmax) && (r[C.cost] === null || r[C.cost] > cmax)) { continue; }
      if (!isNaN(wmax) && (r[C.wall] === null || r[C.wall] > wmax)) { continue; }
      for (var j = 0; j < terms.length; j++) {
        if (hay[i].indexOf(terms[j]) < 0) { continue outer; }
      }
      out.push(i);
    }
    if (state.sort !== null) { out.sort(cmp); }
    state.matches = out;
    var t1 = performance.now();
    render();
    var t2 = performance.now();
    window.__fbLastFilterMs = t2 - t0;
    window.__fbLastSelectMs = t1 - t0;
  }

  // The table is a CSS grid of divs (role table/row/cell): Chromium lays a grid out for a
  // fraction of what a <table> of the same cells costs, and the page re-renders on every filter.
  function cell(row, text, cls) {
    var d = document.createElement('div');
    d.className = cls ? 'c ' + cls : 'c';
    d.setAttribute('role', 'cell');
    d.textContent = text;
    row.appendChild(d);
    return d;
  }

  function link(d, href, text) {
    d.textContent = '';
    if (!SAFE_PAGE.test(href.split('/').pop())) { d.textContent = text; return; }
    var a = document.createElement('a');
    a.href = href;
    a.textContent = text;
    d.appendChild(a);
  }

  function show(v) { return v === null || v === undefined ? '' : String(v); }

  function render() {
    var m = state.matches;
    var pages = Math.max(1, Math.ceil(m.length / PAGE));
    if (state.page >= pages) { state.page = pages - 1; }
    var start = state.page * PAGE, end = Math.min(m.length, start + PAGE);
    var body = document.createElement('div');
    body.setAttribute('role', 'rowgroup');
    for (var i = start; i < end; i++) {
      var r = rows[m[i]];
      var row = document.createElement('div');
      row.className = 'row';
      row.setAttribute('role', 'row');
      SHOWN.forEach(function (s) {
        var name = s[0], v = r[C[name]];
        if (name === 'scenario') {
          var d = cell(row, '');
          link(d, 'scenarios/' + r[C.spage], String(v));
          var sub = document.createElement('span');
          sub.className = 'sub';
          sub.textContent = r[C.topology];
          d.appendChild(sub);
        } else if (name === 'agent') {
          var a = cell(row, show(v));
          if (r[C.model]) {
            var mod = document.createElement('span');
            mod.className = 'sub';
            mod.textContent = r[C.model];
            a.appendChild(mod);
          }
        } else if (name === 'record') {
          // A run known only from the registry has no page: its ticket's page shows it.
          link(cell(row, ''), v ? 'runs/' + r[C.page] : 'scenarios/' + r[C.spage], v ? 'record' : 'row only');
        } else if (name === 'status') {
          var st = cell(row, '');
          var b = document.createElement('span');
          b.className = 'badge st-' + (r[C.status_class] || 'unknown');
          b.textContent = show(v);
          st.appendChild(b);
        } else if (NUMERIC.hasOwnProperty(name)) {
          cell(row, v === null || v === undefined ? '–' : Number(v).toFixed(NUMERIC[name]), 'n');
        } else {
          cell(row, show(v));
        }
      });
      body.appendChild(row);
    }
    body.id = 'runs-body';
    el('runs-body').replaceWith(body);
    el('runs').setAttribute('aria-rowcount', String(m.length + 1));
    el('count').textContent = m.length === 0
      ? 'no run matches (' + rows.length + ' runs)'
      : 'runs ' + (start + 1) + '–' + end + ' of ' + m.length + ' matching (' + rows.length + ' runs)';
    el('prev').disabled = state.page === 0;
    el('next').disabled = state.page >= pages - 1;
    window.__fbShown = end - start;
    window.__fbMatches = m.length;
  }

  var box = el('filters');
  addInput(box, 'q', 'search tickets, diagnoses, ids', 'search');
  SELECTS.forEach(function (s) { addSelect(box, s); });
  addInput(box, 'omin', 'outcome ≥', 'number');
  addInput(box, 'omax', 'outcome ≤', 'number');
  addInput(box, 'cmax', 'USD ≤', 'number');
  addInput(box, 'wmax', 'seconds ≤', 'number');

  var head = document.createElement('div');
  head.className = 'row head';
  head.setAttribute('role', 'row');
  SHOWN.forEach(function (s) {
    var th = document.createElement('div');
    var base = NUMERIC.hasOwnProperty(s[0]) ? 'c n' : 'c';
    th.className = base;
    th.setAttribute('role', 'columnheader');
    th.textContent = s[1];
    th.title = 'sort by ' + s[1];
    // Headers are focusable and sort on Enter/Space too; aria-sort tells assistive tools.
    th.tabIndex = 0;
    th.setAttribute('aria-sort', 'none');
    function sortBy() {
      var c = C[s[0]];
      state.dir = state.sort === c ? -state.dir : 1;
      state.sort = c;
      Array.prototype.forEach.call(head.children, function (h) {
        h.classList.remove('sorted-asc', 'sorted-desc');
        h.setAttribute('aria-sort', 'none');
      });
      th.className = base + ' ' + (state.dir === 1 ? 'sorted-asc' : 'sorted-desc');
      th.setAttribute('aria-sort', state.dir === 1 ? 'ascending' : 'descending');
      apply();
    }
    th.addEventListener('click', sortBy);
    th.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(); }
    });
    head.appendChild(th);
  });
  el('runs-head').appendChild(head);
  var sizes = el('page-size');
  sizes.setAttribute('aria-label', 'rows per page');
  PAGE_SIZES.forEach(function (n) {
    var o = document.createElement('option');
    o.value = String(n);
    o.textContent = n + ' rows per page';
    if (n === PAGE) { o.selected = true; }
    sizes.appendChild(o);
  });
  sizes.addEventListener('change', function () {
    PAGE = parseInt(sizes.value, 10) || 25;
    state.page = 0;
    render();
  });
  el('prev').addEventListener('click', function () { state.page -= 1; render(); });
  el('next').addEventListener('click', function () { state.page += 1; render(); });
  apply();
  window.__fbReady = true;
})();
