// The records console: a page per hash route (#/, #/stream/ID, #/owner,
// #/spool) over the read API (/api/v1/) and the console's routes
// (/console/api/). Every value from the store reaches the document through
// text nodes (el, text), never as markup. Rows are read with decode.js's
// exact JSON reader (recordsDecode), loaded before this script.
'use strict';
(function () {
  var D = window.recordsDecode;
  var main = document.getElementById('main');
  var errorBox = document.getElementById('error');
  var config = { allowWrites: false, spool: false };
  var live = null; // what the current page runs in the background: {abort: function}
  var pageSizes = [25, 100, 500, 1000];

  // el builds an element; children are nodes or strings (as text).
  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === undefined || v === null || v === false) return;
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = v;
        else if (k === 'onclick' || k === 'onsubmit' || k === 'onchange') e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? '' : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return e;
  }

  function showError(msg) {
    errorBox.textContent = msg;
    errorBox.hidden = !msg;
  }

  // jsonOf reads a response's JSON document (with decode.js's exact reader
  // when exact is set: numbers as recordsDecode.Num); a failure is thrown
  // with the API's message.
  function jsonOf(resp, exact) {
    return resp.text().then(function (body) {
      var doc = null;
      if (!resp.ok) {
        try { doc = body ? JSON.parse(body) : null; } catch (e) { doc = null; }
        var msg = doc && doc.error ? doc.error.code + ': ' + doc.error.message : resp.status + ' ' + resp.statusText;
        var err = new Error(msg);
        err.status = resp.status;
        throw err;
      }
      return body ? (exact ? D.parse(body) : JSON.parse(body)) : null;
    });
  }

  // api fetches a JSON document.
  function api(path, opts) {
    return fetch(path, opts).then(jsonOf);
  }

  // ndjson fetches NDJSON rows, read exactly (rowOf).
  function ndjson(path) {
    return fetch(path).then(function (resp) {
      if (!resp.ok) return jsonOf(resp);
      return resp.text().then(function (body) {
        return body.split('\n').filter(function (l) { return l.trim() !== ''; }).map(function (l) { return rowOf(D.parse(l)); });
      });
    });
  }

  // rowOf readies a row read exactly: its _seq as a number (seqs count
  // rows: far below 2^53), every column as decode.js made it.
  function rowOf(r) {
    if (r && r._seq instanceof D.Num) r._seq = Number(r._seq.text);
    return r;
  }

  function enc(s) { return encodeURIComponent(s); }

  function cellText(v) {
    if (v === null || v === undefined) return '';
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }

  // valueText is the text of row r's column c as the console shows it: a
  // json column (types[c] === 'json') and any object or array as the JSON
  // text the server sent (strings in quotes, numbers with every digit),
  // numbers as sent, strings as they are. null and a missing column: ''.
  function valueText(r, c, types) {
    var v = r[c];
    if (v === null || v === undefined) return '';
    if (types[c] === 'json' || (typeof v === 'object' && !(v instanceof D.Num))) {
      var raw = D.rawText(r, c);
      return raw !== undefined ? raw : JSON.stringify(v);
    }
    return String(v);
  }

  function facts(pairs) {
    var dl = el('dl', { class: 'facts' });
    pairs.forEach(function (p) {
      var v = p[1];
      dl.appendChild(el('dt', { text: p[0] }));
      dl.appendChild(el('dd', { 'data-fact': p[0] }, v instanceof Node ? v : cellText(v)));
    });
    return dl;
  }

  function badge(text, kind) { return el('span', { class: 'badge ' + (kind || ''), text: text }); }

  function stopLive() {
    if (live) { live.abort(); live = null; }
  }

  // ---- routes ----

  function route() {
    stopLive();
    showError('');
    var hash = location.hash.replace(/^#/, '') || '/';
    var qi = hash.indexOf('?');
    var path = qi >= 0 ? hash.slice(0, qi) : hash;
    var params = new URLSearchParams(qi >= 0 ? hash.slice(qi + 1) : '');
    document.querySelectorAll('nav a').forEach(function (a) { a.classList.remove('active'); });
    var done;
    if (path.indexOf('/stream/') === 0) {
      done = streamPage(decodeURIComponent(path.slice('/stream/'.length)), params);
    } else if (path === '/owner') {
      mark('nav-owner');
      done = ownerPage();
    } else if (path === '/spool') {
      mark('nav-spool');
      done = spoolPage();
    } else {
      mark('nav-streams');
      done = streamsPage();
    }
    document.body.removeAttribute('data-ready');
    Promise.resolve(done).catch(function (e) { showError(e.message); })
      .then(function () { document.body.setAttribute('data-ready', location.hash || '#/'); });
  }

  function mark(id) { document.getElementById(id).classList.add('active'); }

  function page(title) {
    main.textContent = '';
    var h = el('h2', { text: title });
    main.appendChild(h);
    return h;
  }

  // ---- streams ----

  function streamsPage() {
    page('Streams');
    return api('/api/v1/streams').then(function (doc) {
      var streams = doc.streams || [];
      if (!streams.length) {
        main.appendChild(el('p', { class: 'muted', text: 'No streams yet.' }));
        return;
      }
      var tbody = el('tbody');
      streams.forEach(function (m) {
        tbody.appendChild(el('tr', { 'data-stream': m.stream },
          el('td', null, el('a', { href: '#/stream/' + enc(m.stream), text: m.stream })),
          el('td', { text: m.kind }),
          el('td', { class: 'num', text: String(m.total) }),
          el('td', { class: 'num', text: m.total ? m.lowSeq + '–' + m.highSeq : '–' }),
          el('td', null, m.sealed ? badge('sealed') : badge('open', 'good')),
          el('td', { text: m.expiresAt || '' }),
          el('td', { text: m.updatedAt || '' })));
      });
      main.appendChild(el('div', { class: 'scroll' }, el('table', { id: 'streams' },
        el('thead', null, el('tr', null, el('th', { text: 'stream' }), el('th', { text: 'kind' }), el('th', { text: 'rows' }),
          el('th', { text: 'seq range' }), el('th', { text: 'sealed' }), el('th', { text: 'expires' }), el('th', { text: 'last append' }))),
        tbody)));
    });
  }

  // ---- one stream ----

  function compare(a, b) {
    var x = Number(a), y = Number(b);
    if (a !== '' && b !== '' && !isNaN(x) && !isNaN(y)) return x < y ? -1 : x > y ? 1 : 0;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // matches is the page's own filter, used only against a server that
  // does not know q and where= (it ignores them): the same meaning, over
  // the rows of the page.
  function matches(row, p) {
    if (p.serverQuery) return true;
    if (p.q) {
      var needle = p.q.toLowerCase();
      var hit = Object.keys(row).some(function (k) {
        return k !== '_seq' && typeof row[k] === 'string' && row[k].toLowerCase().indexOf(needle) >= 0;
      });
      if (!hit) return false;
    }
    return p.filters.every(function (f) {
      var v = row[f.col];
      if (v === null || v === undefined) return false;
      var t = valueText(row, f.col, {}), c = compare(t, f.value);
      switch (f.op) {
        case '=': return c === 0;
        case '!=': return c !== 0;
        case '<': return c < 0;
        case '<=': return c <= 0;
        case '>': return c > 0;
        case '>=': return c >= 0;
        default: return t.toLowerCase().indexOf(f.value.toLowerCase()) >= 0;
      }
    });
  }

  // queryString is the read API's query for p, plus extra parameters.
  function queryString(p, extra) {
    var qs = new URLSearchParams();
    if (p.q) qs.set('q', p.q);
    p.filters.forEach(function (f) { qs.append('where', f.text); });
    if (p.sort) qs.set('sort', p.sort);
    Object.keys(extra || {}).forEach(function (k) { if (extra[k] !== undefined && extra[k] !== '') qs.set(k, extra[k]); });
    return qs.toString();
  }

  function streamHash(stream, p) {
    var qs = new URLSearchParams();
    ['after', 'cursor', 'q', 'f', 'sort'].forEach(function (k) { if (p[k]) qs.set(k, p[k]); });
    if (p.limit && p.limit !== 100) qs.set('limit', p.limit);
    var s = qs.toString();
    return '#/stream/' + enc(stream) + (s ? '?' + s : '');
  }

  // loadPage reads one page of rows: from the page route when the server
  // has it (server-side q, where, sort and cursors), else from the rows
  // route a window after p.after (the page filters it itself). Rows are
  // read exactly (decode.js).
  function loadPage(base, p) {
    var url = base + '/page?' + queryString(p, { page_size: p.limit, cursor: p.cursor || undefined, after: p.cursor ? undefined : (p.after || undefined) });
    return fetch(url).then(function (resp) {
      if (resp.status === 404) {
        p.serverQuery = false;
        return ndjson(base + '/rows?' + queryString({ filters: [] }, { after: p.after || undefined, limit: p.limit }))
          .then(function (rows) { return { rows: rows, next: null }; });
      }
      p.serverQuery = true;
      return jsonOf(resp, true).then(function (doc) { return { rows: (doc.rows || []).map(rowOf), next: doc.next || '' }; });
    });
  }

  // lastAfter finds the after= of the last page of p's query in seq
  // order: the server's first page of the same query sorted by -_seq holds
  // the query's last rows, and the page after the smallest seq among them
  // shows them, in order. A server without the page route: the last
  // p.limit seqs of the stream as it is now.
  function lastAfter(base, p) {
    if (!p.serverQuery) {
      return api(base).then(function (m) { return Math.max(0, m.highSeq - p.limit); });
    }
    var url = base + '/page?' + queryString(Object.assign({}, p, { sort: '-_seq' }), { page_size: p.limit });
    return fetch(url).then(function (resp) { return jsonOf(resp, true); }).then(function (doc) {
      var rows = (doc.rows || []).map(rowOf);
      return rows.length ? rows[rows.length - 1]._seq - 1 : 0;
    });
  }

  // go opens hash, reloading the page when it is the one shown already.
  function go(hash) {
    if (location.hash === hash) route();
    else location.hash = hash;
  }

  function streamPage(stream, hp) {
    page(stream).setAttribute('id', 'stream-title');
    var p = {
      after: Math.max(0, parseInt(hp.get('after') || '0', 10) || 0),
      cursor: hp.get('cursor') || '',
      limit: parseInt(hp.get('limit') || '100', 10) || 100,
      q: hp.get('q') || '',
      f: hp.get('f') || '',
      sort: hp.get('sort') || ''
    };
    p.limit = Math.min(Math.max(p.limit, 1), 1000);
    // A filter box that does not parse is shown as the error it is, and
    // no row is read: a query without one of its filters would show rows
    // the user did not ask for.
    var filterError = '';
    try {
      p.filters = D.filters(p.f);
    } catch (e) {
      if (!(e instanceof D.FilterError)) throw e;
      p.filters = [];
      filterError = 'invalid: ' + e.message;
    }
    var base = '/api/v1/streams/' + enc(stream);
    return api(base).then(function (meta) {
      main.appendChild(facts([
        ['kind', meta.kind], ['rows', String(meta.total)], ['seq range', meta.total ? meta.lowSeq + '–' + meta.highSeq : '–'],
        ['generation', String(meta.generation)], ['sealed', meta.sealed ? 'yes' : 'no'], ['expires', meta.expiresAt || 'never'],
        ['created', meta.createdAt], ['last append', meta.updatedAt]
      ]));
      var formBox = el('div');
      var exportBox = el('div');
      var followBar = el('div', { class: 'bar' });
      var rowsBox = el('div', { class: 'scroll', id: 'rows-box' });
      var nav = el('div', { class: 'bar', id: 'pager' });
      var schemaBox = el('section', { id: 'schema' });
      [formBox, exportBox, followBar, rowsBox, nav, schemaBox].forEach(function (n) { main.appendChild(n); });
      return Promise.all([
        api('/console/api/kinds/' + enc(meta.kind)).catch(function () { return null; }),
        api('/api/v1/kinds/' + enc(meta.kind)).catch(function () { return null; }),
        filterError ? null : loadPage(base, p)
      ]).then(function (res) {
        var kind = res[0], info = res[1], pg = res[2];
        formBox.appendChild(searchForm(stream, p, info));
        renderSchema(schemaBox, kind, info);
        if (filterError) {
          rowsBox.remove();
          showError(filterError);
          return;
        }
        var rows = pg.rows;
        exportBox.appendChild(exportBar(base, p));
        var types = {};
        ((kind && kind.columns) || []).forEach(function (c) { types[c.name] = c.type; });
        var cols = columnsOf(kind, rows);
        var table = rowsTable(cols);
        var shown = 0;
        rows.forEach(function (r) { if (matches(r, p)) { table.tBodies[0].appendChild(rowTr(r, cols, types)); shown++; } });
        rowsBox.appendChild(table);
        var last = rows.length ? rows[rows.length - 1]._seq : p.after;
        var first = rows.length ? rows[0]._seq : p.after + 1;
        var more = p.serverQuery ? pg.next !== '' : rows.length >= p.limit;
        pager(nav, base, stream, p, first, last, rows.length, shown, pg.next);
        var seqOrder = !p.sort || p.sort === '_seq';
        var tail = more || !seqOrder ? null : (rows.length ? last : Math.max(p.after, meta.highSeq));
        followControls(followBar, base, table, cols, types, p, meta, tail);
      });
    });
  }

  function searchForm(stream, p, info) {
    var q = el('input', { type: 'search', id: 'q', name: 'q', value: p.q, placeholder: 'text in the search columns' });
    var f = el('input', { type: 'text', id: 'filters', name: 'f', value: p.f, placeholder: 'col=value, n>=3, msg="a, b"' });
    var size = el('select', { id: 'limit', name: 'limit' });
    pageSizes.forEach(function (n) { size.appendChild(el('option', { value: n, selected: n === p.limit }, String(n))); });
    var sort = null;
    if (info && info.sortColumns && info.sortColumns.length) {
      sort = el('select', { id: 'sort', name: 'sort' });
      info.sortColumns.forEach(function (c) {
        sort.appendChild(el('option', { value: c === '_seq' ? '' : c, selected: (p.sort || '') === (c === '_seq' ? '' : c) }, c + ' ↑'));
        sort.appendChild(el('option', { value: '-' + c, selected: p.sort === '-' + c }, c + ' ↓'));
      });
    }
    return el('form', { class: 'query', id: 'search', role: 'search', onsubmit: function (ev) {
      ev.preventDefault();
      go(streamHash(stream, { q: q.value.trim(), f: f.value.trim(), limit: parseInt(size.value, 10), sort: sort ? sort.value : '' }));
    } },
    el('label', { class: 'wide' }, 'Search', q),
    el('label', { title: 'COLUMN OP VALUE, separated by commas; OP one of = != < <= > >= ~; a value holding a comma in double quotes, a quote in it doubled: msg="say ""hi"", then go"' }, 'Filters', f),
    sort ? el('label', null, 'Sort', sort) : null,
    el('label', null, 'Rows per page', size),
    el('button', { type: 'submit', id: 'search-go', text: 'Search' }));
  }

  // exportBar links the rows of the current query as a download, in the
  // formats the server has: NDJSON always; CSV and Parquet when it knows
  // the query parameters (format=). The CSV link asks for the formula
  // guard (csv_guard=1): the file is for a spreadsheet.
  function exportBar(base, p) {
    var bar = el('div', { class: 'bar', id: 'export' }, el('span', { class: 'muted', text: 'Export:' }));
    if (!p.serverQuery) {
      bar.appendChild(el('a', { class: 'button secondary', href: base + '/rows', download: '', 'data-format': 'ndjson', text: 'NDJSON (all rows)' }));
      return bar;
    }
    ['ndjson', 'csv', 'parquet'].forEach(function (fmt) {
      var extra = { format: fmt, download: '1' };
      if (fmt === 'csv') extra.csv_guard = '1';
      bar.appendChild(el('a', { class: 'button secondary', href: base + '/rows?' + queryString(p, extra), 'data-format': fmt, text: fmt.toUpperCase() }));
    });
    return bar;
  }

  function renderSchema(box, kind, info) {
    box.textContent = '';
    box.appendChild(el('h3', { text: 'Schema' }));
    if (!kind) { box.appendChild(el('p', { class: 'muted', text: 'The kind\'s schema is not available.' })); return; }
    var keyed = {};
    (kind.key || []).forEach(function (k) { keyed[k] = true; });
    var tbody = el('tbody');
    (kind.columns || []).forEach(function (c) {
      tbody.appendChild(el('tr', null, el('td', { text: c.name }), el('td', { text: c.type }),
        el('td', { text: c.required ? 'required' : '' }), el('td', { text: keyed[c.name] ? 'key' : '' }),
        el('td', { text: c.name === kind.timeColumn ? 'time column' : '' })));
    });
    box.appendChild(facts([['kind', kind.name], ['key', (kind.key || []).join(', ') || 'none'],
      ['on conflict', kind.onConflict || 'skip'], ['retention', kind.retention ? JSON.stringify(kind.retention) : 'none'],
      ['search columns', info && info.searchColumns ? info.searchColumns.join(', ') || 'none' : 'every string column'],
      ['sort columns', info && info.sortColumns ? info.sortColumns.join(', ') : 'seq']]));
    box.appendChild(el('div', { class: 'scroll' }, el('table', { id: 'schema-columns' },
      el('thead', null, el('tr', null, el('th', { text: 'column' }), el('th', { text: 'type' }), el('th', { text: '' }), el('th', { text: '' }), el('th', { text: '' }))),
      tbody)));
  }

  function columnsOf(kind, rows) {
    var cols = ['_seq'];
    var seen = { _seq: true };
    ((kind && kind.columns) || []).forEach(function (c) { if (!seen[c.name]) { seen[c.name] = true; cols.push(c.name); } });
    rows.forEach(function (r) { Object.keys(r).forEach(function (k) { if (!seen[k]) { seen[k] = true; cols.push(k); } }); });
    return cols;
  }

  function rowsTable(cols) {
    var tr = el('tr');
    cols.forEach(function (c) { tr.appendChild(el('th', { text: c === '_seq' ? 'seq' : c })); });
    return el('table', { id: 'rows' }, el('thead', null, tr), el('tbody'));
  }

  // rowTr is one row of the table: SQL NULL as an em dash (class
  // null-sql), a json column as its JSON text (class json), numbers with
  // the digits the server sent.
  function rowTr(r, cols, types) {
    var tr = el('tr', { 'data-seq': r._seq });
    cols.forEach(function (c) {
      var v = r[c];
      if (v === null) {
        tr.appendChild(el('td', { class: 'null-sql', title: 'NULL: no value', text: '—' }));
        return;
      }
      var json = types[c] === 'json' || (v !== undefined && typeof v === 'object' && !(v instanceof D.Num));
      var cls = json ? 'json' : (v instanceof D.Num || typeof v === 'number' ? 'num' : null);
      tr.appendChild(el('td', { class: cls, text: valueText(r, c, types) }));
    });
    return tr;
  }

  function pager(nav, base, stream, p, first, last, got, shown, next) {
    var same = { q: p.q, f: p.f, limit: p.limit, sort: p.sort };
    nav.appendChild(el('a', { class: 'button secondary', id: 'page-first', href: streamHash(stream, same), text: '⇤ First' }));
    if (p.serverQuery) {
      if (p.cursor) nav.appendChild(el('a', { class: 'button secondary', id: 'page-prev', href: '#', text: '← Back', onclick: function (ev) { ev.preventDefault(); history.back(); } }));
      if (next) nav.appendChild(el('a', { class: 'button secondary', id: 'page-next', href: streamHash(stream, Object.assign({ cursor: next }, same)), text: 'Next →' }));
    } else {
      if (p.after > 0) nav.appendChild(el('a', { class: 'button secondary', id: 'page-prev', href: streamHash(stream, Object.assign({ after: Math.max(0, first - 1 - p.limit) }, same)), text: '← Previous' }));
      if (got >= p.limit) nav.appendChild(el('a', { class: 'button secondary', id: 'page-next', href: streamHash(stream, Object.assign({ after: last }, same)), text: 'Next →' }));
    }
    // Last: the last page of the query in seq order, found with one request
    // (lastAfter) whatever the stream's length.
    var seqOrder = !p.sort || p.sort === '_seq';
    var lastBtn = el('button', { type: 'button', class: 'secondary', id: 'page-last', text: 'Last ⇥', disabled: !seqOrder,
      title: seqOrder ? 'the last page' : 'Last works in seq order (sort by _seq)' });
    lastBtn.addEventListener('click', function () {
      lastBtn.disabled = true;
      lastAfter(base, p).then(function (after) {
        go(streamHash(stream, Object.assign({ after: after }, same)));
      }).catch(function (e) { lastBtn.disabled = false; showError(e.message); });
    });
    nav.appendChild(lastBtn);
    nav.appendChild(el('span', { class: 'muted', id: 'page-info', text: shown + ' rows shown' + (got ? ', seq ' + first + '–' + last : '') +
      (p.serverQuery ? '' : (p.q || p.filters.length ? ' (filtered in the page: this server has no query parameters)' : '')) }));
  }

  // followControls offers live follow: Follow on the last page (in seq
  // order) appends the rows after the page's last one to the table as the
  // server streams them; Follow from now, on any page, empties the table
  // and follows from the stream's newest row at the time of the click.
  function followControls(bar, base, table, cols, types, p, meta, after) {
    var status = el('span', { class: 'muted', id: 'follow-status' });
    var btn = el('button', { type: 'button', id: 'follow', class: 'secondary', text: 'Follow' });
    var now = el('button', { type: 'button', id: 'follow-now', class: 'secondary', text: 'Follow from now' });
    var canFollow = after !== null && !meta.sealed;
    var sealed = meta.sealed;
    if (meta.sealed) {
      status.textContent = 'The stream is sealed: no rows will come.';
    } else if (after === null) {
      status.textContent = 'Follow works on the last page; Follow from now works on any.';
    }
    var following = false;
    function idle(text) {
      following = false;
      btn.textContent = 'Follow';
      btn.disabled = !canFollow;
      now.disabled = sealed;
      if (text) status.textContent = text;
    }
    idle('');
    function start(from, fromNow) {
      following = true;
      btn.textContent = 'Stop';
      btn.disabled = false;
      now.disabled = true;
      status.textContent = fromNow ? 'Following from now (after seq ' + from + ')…' : 'Following…';
      var ctrl = new AbortController();
      var added = 0;
      live = { abort: function () { ctrl.abort(); idle('Stopped after ' + added + ' new rows.'); } };
      var url = base + '/follow?' + (p.serverQuery ? queryString(Object.assign({}, p, { sort: '' }), { after: from }) : 'after=' + from);
      fetch(url, { signal: ctrl.signal }).then(function (resp) {
        if (!resp.ok) return jsonOf(resp);
        var reader = resp.body.getReader();
        var dec = new TextDecoder();
        var buf = '';
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) {
              live = null;
              canFollow = false;
              sealed = true;
              idle('The stream ended (sealed, deleted or server stopped) after ' + added + ' new rows.');
              return;
            }
            buf += dec.decode(chunk.value, { stream: true });
            var nl;
            while ((nl = buf.indexOf('\n')) >= 0) {
              var line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              if (!line.trim()) continue;
              var r = rowOf(D.parse(line));
              if (!matches(r, p)) continue;
              var tr = rowTr(r, cols, types);
              tr.className = 'new';
              table.tBodies[0].appendChild(tr);
              added++;
              status.textContent = 'Following… ' + added + ' new rows.';
            }
            return pump();
          });
        }
        return pump();
      }).catch(function (e) {
        if (e.name === 'AbortError') return;
        live = null;
        idle('');
        showError('follow: ' + e.message);
      });
    }
    btn.addEventListener('click', function () {
      if (following) { stopLive(); return; }
      start(after, false);
    });
    now.addEventListener('click', function () {
      if (following) return;
      now.disabled = true;
      api(base).then(function (m) {
        if (m.sealed) {
          canFollow = false;
          sealed = true;
          idle('The stream is sealed: no rows will come.');
          return;
        }
        table.tBodies[0].textContent = '';
        start(m.highSeq, true);
      }).catch(function (e) { idle(''); showError(e.message); });
    });
    bar.appendChild(btn);
    bar.appendChild(now);
    bar.appendChild(status);
  }

  // ---- owner ----

  function ownerPage() {
    page('Owner');
    var box = el('div', { id: 'owner' });
    main.appendChild(box);
    function load() {
      return api('/console/api/owner').then(function (o) {
        box.textContent = '';
        box.appendChild(facts([
          ['phase', o.phase], ['this process', o.role || ''], ['epoch', String(o.epoch || 0)],
          ['heartbeat age', o.heartbeatAt ? (o.heartbeatAgeMs / 1000).toFixed(1) + ' s' : '–'],
          ['stale', o.stale ? badge('stale', 'bad') : badge('no', 'good')], ['socket', o.socketAlive ? 'answers' : 'silent'],
          ['pid', o.pid ? String(o.pid) : ''], ['host', o.host || ''], ['build', o.build || ''],
          ['backlog', String(o.backlog || 0)], ['failed', String(o.failed || 0)], ['refused', String(o.refused || 0)],
          ['last error', o.lastError || 'none']
        ]));
        if (o.hint) box.appendChild(el('p', { class: 'muted', text: o.hint }));
        box.appendChild(el('p', { class: 'muted', text: 'Refreshed every 5 s.' }));
      });
    }
    var timer = setInterval(function () { load().catch(function (e) { showError(e.message); }); }, 5000);
    live = { abort: function () { clearInterval(timer); } };
    return load();
  }

  // ---- spool ----

  function spoolPage() {
    page('Spool');
    if (!config.spool) {
      main.appendChild(el('p', { class: 'muted', text: 'This server has no spool (the store is open read-only).' }));
      return null;
    }
    return api('/console/api/spool').then(function (s) {
      main.appendChild(facts([['backlog', String(s.backlog)], ['failed', String(s.failed.length)],
        ['retry', s.allowWrites ? 'allowed' : 'off (serve --allow-writes)']]));
      if (!s.failed.length) { main.appendChild(el('p', { class: 'muted', id: 'no-failed', text: 'No failed batches.' })); return; }
      var tbody = el('tbody');
      s.failed.forEach(function (b) {
        var f = b.failure;
        var actions = el('td');
        if (s.allowWrites) {
          actions.appendChild(el('button', { type: 'button', class: 'retry', 'data-batch': b.batch, text: 'Retry', onclick: function (ev) {
            ev.target.disabled = true;
            api('/console/api/spool/failed/' + enc(b.batch) + '/retry', { method: 'POST', headers: { 'X-Records-Console': '1' } })
              .then(route).catch(function (e) { ev.target.disabled = false; showError(e.message); });
          } }));
        }
        tbody.appendChild(el('tr', { 'data-batch': b.batch },
          el('td', { text: b.batch }), el('td', { text: b.created }),
          el('td', { text: f ? f.code : '' }), el('td', { text: f ? f.failedAt : '' }),
          el('td', null, el('pre', { text: f ? JSON.stringify(f, null, 2) : (b.problem || 'no error.json') })),
          actions));
      });
      main.appendChild(el('div', { class: 'scroll' }, el('table', { id: 'failed' },
        el('thead', null, el('tr', null, el('th', { text: 'batch' }), el('th', { text: 'created' }), el('th', { text: 'code' }),
          el('th', { text: 'failed at' }), el('th', { text: 'error.json' }), el('th', { text: '' }))),
        tbody)));
    });
  }

  api('/console/api/config').then(function (c) { config = c; }).catch(function (e) { showError(e.message); })
    .then(function () {
      window.addEventListener('hashchange', route);
      route();
    });
})();
