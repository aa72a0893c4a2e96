// Shared painter of the conformance pages (loaded with <script src="../code.js">, so every
// page also loads an external classic script).
//
// window.paintCodes(values) paints values[r] as row r of binary cells on a fixed 640x360
// canvas at the page's top-left, above everything else: row r covers y in [r*40, r*40+40),
// 20 cells of 32x40 px, cell b at x = b*32, most significant bit first, #fff for 1 and #000
// for 0. Each value is painted as Math.round(Math.max(0, v)) & 0xFFFFF (NaN, null and
// undefined paint 0). The rest of the canvas stays transparent, so the page's own content
// shows below the rows. The format is that of tests/pages/timecode.html.
(function () {
  'use strict';
  var BITS = 20, CELL_W = 32, CELL_H = 40, MASK = 0xFFFFF;
  var canvas = null, ctx = null;

  function ensureCanvas() {
    if (ctx) return ctx;
    canvas = document.createElement('canvas');
    canvas.id = 'codes';
    canvas.width = 640;
    canvas.height = 360;
    canvas.style.cssText = 'position:absolute;left:0;top:0;width:640px;height:360px;' +
                           'z-index:2147483647;pointer-events:none;margin:0;padding:0;border:0';
    (document.body || document.documentElement).appendChild(canvas);
    ctx = canvas.getContext('2d');
    return ctx;
  }

  function code(v) {
    v = Number(v);
    if (!isFinite(v)) v = 0;
    return Math.round(Math.max(0, v)) & MASK;
  }

  window.paintCodes = function paintCodes(values) {
    var c = ensureCanvas();
    for (var r = 0; r < values.length; r++) {
      var value = code(values[r]);
      for (var b = 0; b < BITS; b++) {
        c.fillStyle = (value >> (BITS - 1 - b)) & 1 ? '#fff' : '#000';
        c.fillRect(b * CELL_W, r * CELL_H, CELL_W, CELL_H);
      }
    }
  };

  // Paint zeros at once, so a frame drawn before the page's first paint reads 0 in every row
  // the page declares with <body data-rows="N">.
  function paintZeros() {
    var rows = Number(document.body && document.body.getAttribute('data-rows')) || 0;
    var zeros = [];
    for (var i = 0; i < rows; i++) zeros.push(0);
    if (rows) window.paintCodes(zeros);
  }
  if (document.body) paintZeros();
  else document.addEventListener('DOMContentLoaded', paintZeros);
})();
