// The console's decoders, apart from the page's DOM code (app.js) so that
// they run outside a browser too (decode_fuzz_test.go fuzzes them): an
// exact JSON reader and the filter box's syntax. No DOM here; the one
// global is recordsDecode.
'use strict';
var recordsDecode = (function () {
  // maxNesting is the deepest nesting a stored json value may have (the
  // engine's limit, encoding/json's): deeper text is refused.
  var maxNesting = 10000;

  // Num is a JSON number kept as the text it was written in, so that
  // 9223372036854775807 keeps every digit (a JavaScript number has 53 bits).
  function Num(text) { this.text = text; }
  Num.prototype.toString = function () { return this.text; };

  // members maps each object parse made to the source text of each of its
  // members' values (by key): a json column is shown as it was sent.
  var members = new WeakMap();

  function isDigit(c) { return c >= 48 && c <= 57; }

  // parse reads one JSON text exactly: numbers become Num, strings and
  // literals what JSON.parse makes of them, arrays arrays, objects objects
  // without a prototype (so "__proto__" is a key like any other; a repeated
  // key keeps its last value). It keeps no number as a float. Text that is
  // not one well-formed JSON value, or nests deeper than maxNesting, throws
  // a SyntaxError with the offset. It loops instead of recursing, so the
  // nesting depth does not depend on the browser's stack.
  function parse(text) {
    text = String(text);
    var i = 0, n = text.length, stack = [];
    function fail(what) { throw new SyntaxError('JSON at offset ' + i + ': ' + what); }
    function ws() {
      while (i < n) {
        var c = text.charCodeAt(i);
        if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return;
        i++;
      }
    }
    function digits() {
      var s = i;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
      return i - s;
    }
    function number() {
      var s = i;
      if (text.charCodeAt(i) === 45) i++; // -
      if (text.charCodeAt(i) === 48) i++; // a leading 0 stands alone
      else if (digits() === 0) fail('want a digit');
      if (text.charCodeAt(i) === 46) { // .
        i++;
        if (digits() === 0) fail('want a digit after the decimal point');
      }
      var c = text.charCodeAt(i);
      if (c === 101 || c === 69) { // e E
        i++;
        c = text.charCodeAt(i);
        if (c === 43 || c === 45) i++;
        if (digits() === 0) fail('want a digit in the exponent');
      }
      return new Num(text.slice(s, i));
    }
    function string() {
      var s = i;
      i++;
      for (;;) {
        if (i >= n) fail('unterminated string');
        var c = text.charCodeAt(i);
        if (c === 34) { i++; break; }
        if (c === 92) { i += 2; continue; }
        if (c < 32) fail('control character in a string');
        i++;
      }
      try {
        return JSON.parse(text.slice(s, i)); // the escapes, read by the platform's own reader
      } catch (e) {
        i = s;
        return fail('bad escape in a string');
      }
    }
    function literal(word, v) {
      if (text.slice(i, i + word.length) !== word) fail('want a value');
      i += word.length;
      return v;
    }
    function scalar() {
      var c = text.charCodeAt(i);
      if (c === 34) return string();
      if (c === 45 || isDigit(c)) return number();
      if (c === 116) return literal('true', true);
      if (c === 102) return literal('false', false);
      if (c === 110) return literal('null', null);
      return fail(i >= n ? 'unexpected end' : 'want a value');
    }
    // key reads an object member's key and its colon into top.
    function key(top) {
      ws();
      if (text.charCodeAt(i) !== 34) fail('want a key');
      top.key = string();
      ws();
      if (text.charCodeAt(i) !== 58) fail('want a colon');
      i++;
    }
    for (;;) {
      ws();
      var start = i, v, c = text.charCodeAt(i);
      if (c === 123 || c === 91) { // { [
        if (stack.length >= maxNesting) fail('nested deeper than ' + maxNesting);
        i++;
        var arr = c === 91;
        var box = { v: arr ? [] : Object.create(null), arr: arr, raw: arr ? null : Object.create(null), start: start, key: '' };
        if (!arr) members.set(box.v, box.raw);
        ws();
        if (text.charCodeAt(i) === (arr ? 93 : 125)) {
          i++;
          v = box.v;
        } else {
          stack.push(box);
          if (!arr) key(box);
          continue;
        }
      } else {
        v = scalar();
      }
      // v is a whole value from start to i: put it in its container, and
      // close every container that ends after it.
      for (;;) {
        var top = stack[stack.length - 1];
        if (!top) {
          ws();
          if (i < n) fail('text after the value');
          return v;
        }
        if (top.arr) top.v.push(v);
        else {
          top.v[top.key] = v;
          top.raw[top.key] = text.slice(start, i);
        }
        ws();
        c = text.charCodeAt(i);
        if (c === 44) { // ,
          i++;
          if (!top.arr) key(top);
          break;
        }
        if (c !== (top.arr ? 93 : 125)) fail(top.arr ? 'want a comma or ]' : 'want a comma or }');
        i++;
        stack.pop();
        v = top.v;
        start = top.start;
      }
    }
  }

  // rawText returns the source text of obj[key], an object parse made, as
  // it was sent; undefined when obj has no such key.
  function rawText(obj, key) {
    var m = members.get(obj);
    return m ? m[key] : undefined;
  }

  // The filter box: COLUMN OP VALUE filters separated by commas, the
  // server's where= syntax (docs/reading.md). A value that holds a comma
  // is written in double quotes, a quote inside them doubled:
  // msg="hello, world", msg="say ""hi""". The quotes are the box's only:
  // the server gets the value between them.

  // filterOps are the operators, longest first (">=" is not ">" then "=3").
  var filterOps = ['>=', '<=', '!=', '=', '<', '>', '~'];
  var filterHelp = 'want COLUMN OP VALUE with OP one of = != < <= > >= ~; quote a value that holds a comma: msg="hello, world"';

  function isNameChar(c) {
    return c === 95 || (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || isDigit(c);
  }

  function isSpace(ch) { return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r'; }

  // FilterError is a filter box that does not parse; its message names the
  // part and says what is wrong.
  function FilterError(message) {
    this.name = 'FilterError';
    this.message = message;
  }
  FilterError.prototype = Object.create(Error.prototype);
  FilterError.prototype.constructor = FilterError;

  // quote writes s as a filter box quotes a value.
  function quote(s) { return '"' + String(s).split('"').join('""') + '"'; }

  // filters reads the filter box: a list of {col, op, value, text} (text
  // is the where= parameter: COLUMN OP VALUE, unquoted). Blank parts (a
  // trailing comma) are skipped. A part without a column or an operator,
  // a quote left open, or text after a closing quote throws a
  // FilterError: nothing is to be queried then.
  function filters(s) {
    s = String(s || '');
    var out = [], i = 0, n = s.length;
    // part is the text of the part that starts at from, for a message.
    function part(from) {
      var end = s.indexOf(',', from);
      return JSON.stringify(s.slice(from, end < 0 ? n : end).trim());
    }
    while (i < n) {
      while (i < n && isSpace(s.charAt(i))) i++;
      if (i >= n) break;
      if (s.charAt(i) === ',') { i++; continue; }
      var from = i;
      while (i < n && isNameChar(s.charCodeAt(i))) i++;
      var col = s.slice(from, i);
      if (!col) throw new FilterError('filter ' + part(from) + ': no column; ' + filterHelp);
      var op = '';
      for (var k = 0; k < filterOps.length; k++) {
        if (s.slice(i, i + filterOps[k].length) === filterOps[k]) { op = filterOps[k]; break; }
      }
      if (!op) throw new FilterError('filter ' + part(from) + ': no operator after column ' + col + '; ' + filterHelp);
      i += op.length;
      var value;
      if (s.charAt(i) === '"') {
        var opened = i;
        value = '';
        i++;
        for (;;) {
          if (i >= n) throw new FilterError('filter ' + JSON.stringify(s.slice(from)) + ': the quote at offset ' + opened + ' is not closed (a quote inside a value is doubled: "")');
          var ch = s.charAt(i);
          if (ch === '"') {
            if (s.charAt(i + 1) === '"') { value += '"'; i += 2; continue; }
            i++;
            break;
          }
          value += ch;
          i++;
        }
        while (i < n && isSpace(s.charAt(i))) i++;
        if (i < n && s.charAt(i) !== ',') {
          throw new FilterError('filter ' + part(from) + ': text after the closing quote at offset ' + (i - 1) + ' (a quote inside a value is doubled: "")');
        }
      } else {
        var vs = i;
        while (i < n && s.charAt(i) !== ',') i++;
        value = s.slice(vs, i).replace(/[ \t\n\r]+$/, '');
      }
      out.push({ col: col, op: op, value: value, text: col + op + value });
      i++; // the comma, or past the end
    }
    return out;
  }

  return { Num: Num, parse: parse, rawText: rawText, filters: filters, FilterError: FilterError, quote: quote, maxNesting: maxNesting };
})();
