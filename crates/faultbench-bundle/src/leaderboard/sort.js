// Sorts the leaderboard table by a column: click a header, or focus it and press Enter or
// Space. Rows are reordered as they are; cell text is never parsed as HTML.
(function () {
  var table = document.getElementById("board");
  if (!table) return;
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function key(row, i, numeric) {
    var v = row.cells[i].getAttribute("data-v");
    if (numeric) {
      var x = parseFloat(v);
      return isNaN(x) ? null : x;
    }
    return v === null ? "" : v;
  }
  function sortBy(i) {
    var th = heads[i];
    var numeric = th.getAttribute("data-type") === "n";
    var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
    if (!numeric && th.getAttribute("aria-sort") !== "ascending") dir = "ascending";
    for (var j = 0; j < heads.length; j++) heads[j].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", dir);
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, i, numeric), y = key(b, i, numeric);
      if (x === y) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      var c = x < y ? -1 : 1;
      return dir === "ascending" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(heads, function (th, i) {
    th.tabIndex = 0;
    th.setAttribute("role", "columnheader");
    th.addEventListener("click", function () { sortBy(i); });
    th.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(i); }
    });
  });
})();
