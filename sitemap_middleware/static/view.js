// Progressive enhancement of the sitemap table: sort buttons in the column headers and a
// filter box. Without JavaScript the table is complete and readable as sent.
// No innerHTML or other string-to-markup sink: the page's CSP requires Trusted Types.
(function () {
  "use strict";
  var table = document.querySelector("table[data-sortable]");
  if (!table || !table.tHead || !table.tBodies.length) { return; }
  var body = table.tBodies[0];
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var rows = Array.prototype.slice.call(body.rows);
  var texts = null;  // lower-cased row texts, built on the first filter
  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  var state = { col: -1, dir: "ascending", q: "" };

  var tools = document.createElement("div");
  tools.className = "tools";
  var label = document.createElement("label");
  label.textContent = "Filter rows ";
  var input = document.createElement("input");
  input.type = "search";
  input.id = "filter";
  input.setAttribute("aria-controls", table.id);
  label.appendChild(input);
  var status = document.createElement("p");
  status.id = "status";
  status.setAttribute("role", "status");
  tools.appendChild(label);
  tools.appendChild(status);
  table.parentNode.parentNode.insertBefore(tools, table.parentNode);

  // A cell's sort key: a number for numeric columns, a timestamp for dates, else text.
  // Empty cells sort last in either direction.
  function key(row, col) {
    var cell = row.cells[col];
    var type = heads[col].getAttribute("data-type");
    if (!cell || cell.textContent.trim() === "") { return null; }
    if (type === "number") { return Number(cell.textContent.replace(/,/g, "")); }  // 12,207
    if (type === "date") {
      var time = cell.querySelector("time");
      return time ? Date.parse(time.getAttribute("datetime")) : null;
    }
    return cell.textContent.trim();
  }

  function sortBy(col, dir) {
    var keyed = rows.map(function (row, i) { return [key(row, col), i, row]; });
    var sign = dir === "ascending" ? 1 : -1;
    keyed.sort(function (a, b) {
      if (a[0] === null || b[0] === null) {
        return (a[0] === null) - (b[0] === null) || a[1] - b[1];
      }
      var cmp = typeof a[0] === "number" ? a[0] - b[0] : collator.compare(a[0], b[0]);
      return sign * cmp || a[1] - b[1];
    });
    var fragment = document.createDocumentFragment();
    keyed.forEach(function (k) { fragment.appendChild(k[2]); });
    body.appendChild(fragment);
    heads.forEach(function (th, i) {
      if (i === col) { th.setAttribute("aria-sort", dir); } else { th.removeAttribute("aria-sort"); }
      var mark = th.querySelector("button span");
      if (mark) { mark.textContent = i === col ? (dir === "ascending" ? "\u25B2" : "\u25BC") : "\u2195"; }
    });
    state.col = col;
    state.dir = dir;
    announce("Sorted by " + heads[col].textContent.replace(/[\u25B2\u25BC\u2195]/g, "").trim() +
      ", " + dir + ".");
  }

  function filter(q) {
    state.q = q;
    var needle = q.trim().toLowerCase();
    if (texts === null) { texts = rows.map(function (r) { return r.textContent.toLowerCase(); }); }
    var shown = 0;
    rows.forEach(function (row, i) {
      var hide = needle !== "" && texts[i].indexOf(needle) < 0;
      row.hidden = hide;
      if (!hide) { shown += 1; }
    });
    announce(needle === "" ? "" : "Showing " + shown + " of " + rows.length + " rows.");
  }

  function announce(text) { status.textContent = text; }

  // The view's state lives in the address (#sort=1-descending&q=shoes): shareable, reloadable.
  function save() {
    var parts = [];
    if (state.col >= 0) { parts.push("sort=" + state.col + "-" + state.dir); }
    if (state.q) { parts.push("q=" + encodeURIComponent(state.q)); }
    history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname);
  }

  heads.forEach(function (th, col) {
    var button = document.createElement("button");
    button.type = "button";
    while (th.firstChild) { button.appendChild(th.firstChild); }
    var mark = document.createElement("span");
    mark.setAttribute("aria-hidden", "true");
    mark.textContent = "\u2195";  // sortable; becomes an arrow once sorted
    button.appendChild(mark);
    th.appendChild(button);
    button.addEventListener("click", function () {
      var dir = state.col === col && state.dir === "ascending" ? "descending" : "ascending";
      sortBy(col, dir);
      save();
    });
  });

  // A phone shows a row's other cells while its details are open: the row is marked
  // (toggle does not bubble: caught on its way down).
  body.addEventListener("toggle", function (event) {
    var cell = event.target.parentNode;
    if (cell && cell.className === "ext") { cell.parentNode.classList.toggle("open", event.target.open); }
  }, true);

  var pending = 0;
  input.addEventListener("input", function () {
    clearTimeout(pending);
    pending = setTimeout(function () { filter(input.value); save(); }, rows.length > 5000 ? 250 : 0);
  });

  var wanted = /(?:^#|&)sort=(\d+)-(ascending|descending)/.exec(location.hash);
  if (wanted && heads[+wanted[1]]) { sortBy(+wanted[1], wanted[2]); }
  var query = /(?:^#|&)q=([^&]*)/.exec(location.hash);
  if (query) {
    try { input.value = decodeURIComponent(query[1]); } catch (e) { input.value = ""; }
    filter(input.value);
  }
}());
