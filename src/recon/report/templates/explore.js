// The findings explorer of report.html (recon.report.explore): search, filter, sort and page
// every finding of the run, offline. Data comes from the JSON block #findings-data; rows are
// built with textContent only, never as HTML. Amounts sort by their exact minor units scaled
// to one exponent (the face value people read), never by parsing the formatted text.
(() => {
  "use strict";
  const dataEl = document.getElementById("findings-data");
  const root = document.getElementById("explore");
  if (!dataEl || !root) return;
  const started = performance.now();
  const D = JSON.parse(dataEl.textContent);
  const C = D.col; // one array per column, one entry per finding
  const n = D.n;
  const ANY = -2; // a filter left on "all"; -1 is a value this run does not have
  const NO_CURRENCY = "-";
  const $ = (id) => document.getElementById(id);
  const el = {
    form: $("explore-form"), q: $("f-q"), check: $("f-check"), severity: $("f-severity"),
    currency: $("f-currency"), state: $("f-state"), sort: $("f-sort"), size: $("f-size"),
    work: $("f-work"), owner: $("f-owner"),
    status: $("explore-status"), hint: $("explore-hint"), body: $("explore-rows"),
    prev: $("explore-prev"), next: $("explore-next"), page: $("explore-page"),
    filters: $("explore-filters"),
  };
  const fmt = new Intl.NumberFormat("en-US");
  const fx = new Intl.NumberFormat("en-US", { maximumFractionDigits: D.fx ? D.fx.digits : 2,
    minimumFractionDigits: D.fx ? D.fx.digits : 2 });

  let hay = null; // lower-cased search text per row, built on the first search
  const haystack = () => {
    if (hay === null) {
      hay = new Array(n);
      for (let i = 0; i < n; i++) {
        hay[i] = [
          D.checks[C.check[i]], D.entities[C.entity[i]], C.id[i], D.issues[C.issue[i]],
          C.cur[i] === null ? "" : D.currencies[C.cur[i]], C.text[i],
          C.first[i] === null ? "" : D.firstSeen[C.first[i]], C.detail[i] || "",
          C.owner[i] === null ? "" : D.owners[C.owner[i]],
          // amounts without their thousands separators too: 1653.12 finds 1,653.12
          C.text[i].replace(/,/g, ""), (C.detail[i] || "").replace(/(\d),(?=\d{3})/g, "$1"),
        ].join("\u0001").toLowerCase();
      }
    }
    return hay;
  };

  // The face value of each amount (minor units scaled to the largest exponent), exactly:
  // a Number while it is an exact integer (below 2**53), else compared as BigInt.
  let keys = null;
  const big = [];
  const amountKeys = () => {
    if (keys === null) {
      const top = D.exponents.reduce((a, e) => Math.max(a, e), 0);
      const scale = D.exponents.map((e) => 10 ** (top - e));
      keys = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const m = C.minor[i];
        keys[i] = m === null ? NaN : Number(m) * (C.cur[i] === null ? 10 ** top : scale[C.cur[i]]);
      }
      const bigScale = D.exponents.map((e) => 10n ** BigInt(top - e));
      const exact = (i) => {
        if (big[i] === undefined) {
          big[i] = BigInt(C.minor[i]) * (C.cur[i] === null ? 10n ** BigInt(top) : bigScale[C.cur[i]]);
        }
        return big[i];
      };
      keys.exact = exact;
    }
    return keys;
  };
  const LIMIT = 2 ** 53;
  // Amounts compare within a currency only: currency first (none last), then the amount.
  const curName = (i) => (C.cur[i] === null ? null : D.currencies[C.cur[i]]);
  const byAmount = (dir) => {
    const k = amountKeys();
    return (a, b) => {
      const ca = curName(a), cb = curName(b);
      if (ca !== cb) {
        if (ca === null || cb === null) return ca === null ? 1 : -1;
        return ca < cb ? -1 : 1;
      }
      const x = k[a], y = k[b];
      if (Number.isNaN(x) || Number.isNaN(y)) {
        if (Number.isNaN(x) && Number.isNaN(y)) return a - b;
        return Number.isNaN(x) ? 1 : -1; // no amount: last either way
      }
      if (Math.abs(x) < LIMIT && Math.abs(y) < LIMIT) {
        return x === y ? a - b : (x < y ? -1 : 1) * dir;
      }
      const bx = k.exact(a), by = k.exact(b);
      return bx === by ? a - b : (bx < by ? -1 : 1) * dir;
    };
  };

  // Each order is computed once, when first asked for.
  const orders = {};
  const nullsLast = (x, y, dir, a, b) => {
    if (x === null || y === null) {
      if (x === y) return a - b;
      return x === null ? 1 : -1;
    }
    if (x === y) return a - b;
    return (x < y ? -1 : 1) * dir;
  };
  const byName = (a, b) => {
    const ca = D.checks[C.check[a]], cb = D.checks[C.check[b]];
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (C.id[a] !== C.id[b]) return C.id[a] < C.id[b] ? -1 : 1;
    return a - b;
  };
  const SEVERITY = { error: 0, warn: 1, info: 2 };
  const bySeverity = (a, b) => {
    const x = SEVERITY[D.severities[C.sev[a]]] ?? 9, y = SEVERITY[D.severities[C.sev[b]]] ?? 9;
    if (x !== y) return x - y;
    const byAge = nullsLast(C.age[a], C.age[b], -1, a, b); // the oldest first
    return C.age[a] === C.age[b] ? byName(a, b) : byAge;
  };
  // With the user's exchange rates only (D.fx, RECON_FX_RATES): the amount converted to
  // the base currency, for ordering; the page labels every converted figure.
  const converted = (i) => {
    const rate = D.fx && C.cur[i] !== null ? D.fx.rates[C.cur[i]] : null;
    if (rate === null || rate === undefined || C.minor[i] === null) return null;
    return Number(C.minor[i]) * 10 ** -D.exponents[C.cur[i]] * rate;
  };
  const order = (sort) => {
    if (!orders[sort]) {
      const idx = Array.from({ length: n }, (_, i) => i);
      if (sort === "severity") {
        idx.sort(bySeverity);
      } else if (sort === "converted-desc" && D.fx) {
        const v = idx.map(converted);
        idx.sort((a, b) => nullsLast(v[a], v[b], -1, a, b));
      } else if (sort === "amount-desc" || sort === "amount-asc") {
        idx.sort(byAmount(sort === "amount-desc" ? -1 : 1));
      } else if (sort === "age-desc" || sort === "age-asc") {
        const dir = sort === "age-desc" ? -1 : 1;
        idx.sort((a, b) => nullsLast(C.age[a], C.age[b], dir, a, b));
      } else {
        idx.sort(byName);
      }
      orders[sort] = idx;
    }
    return orders[sort];
  };

  const pick = (value, list) => (value === "" ? ANY : list.indexOf(value));
  let matched = [];
  let items = null; // the matched findings by item (entity and id), or null: one each
  let page = 0;
  // One item with several problems is one row listing them (the findings stay separate
  // in the warehouse); an item takes the place of its first finding in the order. Each
  // finding's item is numbered once; a run whose every finding is its own item pays
  // nothing more per filter.
  let itemOf = null;
  let itemCount = 0;
  const itemNumbers = () => {
    if (itemOf === null) {
      const at = new Map();
      itemOf = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const key = C.entity[i] + "\u0001" + C.id[i];
        let k = at.get(key);
        if (k === undefined) {
          k = at.size;
          at.set(key, k);
        }
        itemOf[i] = k;
      }
      itemCount = at.size;
    }
    return itemOf;
  };
  const byItem = (idx) => {
    const of = itemNumbers();
    if (itemCount === n) return null;
    const slot = new Int32Array(itemCount).fill(-1);
    const out = [];
    for (const i of idx) {
      const k = of[i];
      if (slot[k] < 0) {
        slot[k] = out.length;
        out.push([i]);
      } else {
        out[slot[k]].push(i);
      }
    }
    return out.length === idx.length ? null : out;
  };
  const itemTotal = () => (items === null ? matched.length : items.length);
  const itemAt = (j) => (items === null ? [matched[j]] : items[j]);

  const filter = () => {
    const terms = el.q.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const check = pick(el.check.value, D.checks);
    const sev = pick(el.severity.value, D.severities);
    const cv = el.currency.value;
    const cur = cv === "" ? ANY : cv === NO_CURRENCY ? null : D.currencies.indexOf(cv);
    const sv = el.state.value;
    const unresolved = sv === "unresolved";
    const state = unresolved ? D.states.indexOf("resolved") : pick(sv, D.states);
    const work = pick(el.work.value, D.works);
    const ov = el.owner.value;
    const owner = ov === "" ? ANY : ov === "-" ? null : D.owners.indexOf(ov);
    const h = terms.length ? haystack() : null;
    const idx = order(el.sort.value);
    const out = [];
    for (let j = 0; j < idx.length; j++) {
      const i = idx[j];
      if (check !== ANY && C.check[i] !== check) continue;
      if (sev !== ANY && C.sev[i] !== sev) continue;
      if (cur !== ANY && C.cur[i] !== cur) continue;
      if (unresolved ? C.state[i] === state : state !== ANY && C.state[i] !== state) continue;
      if (work !== ANY && C.work[i] !== work) continue;
      if (owner !== ANY && C.owner[i] !== owner) continue;
      if (h !== null && !terms.every((t) => h[i].includes(t))) continue;
      out.push(i);
    }
    matched = out;
    items = byItem(out);
    page = 0;
    render();
  };

  const cell = (tr, text, cls) => {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  };
  const span = (parent, text, cls) => {
    const s = document.createElement("span");
    s.className = cls;
    s.textContent = text;
    parent.appendChild(s);
    return s;
  };

  // What one finding shows in each column, written into `to` (a cell, or one line of a
  // cell when the row lists several problems of one item).
  const show = {
    check: (to, i) => {
      D.checks[C.check[i]].split("_").forEach((part, k) => {
        if (k > 0) to.append("_", document.createElement("wbr")); // break after "_" only
        to.append(part);
      });
      const note = D.checkNotes[C.check[i]];
      if (note) {
        to.appendChild(document.createElement("br"));
        span(to, note, "muted");
      }
    },
    sev: (to, i) => { const sev = D.severities[C.sev[i]]; span(to, sev, "sev " + sev); },
    state: (to, i) => {
      const st = D.states[C.state[i]];
      span(to, st, st === "new" ? "state-new" : "state");
    },
    issue: (to, i) => { to.append(D.issues[C.issue[i]]); },
    amount: (to, i) => {
      to.append(C.text[i] || "—");
      const cv = el.sort.value === "converted-desc" ? converted(i) : null;
      if (cv !== null && C.cur[i] !== null && D.currencies[C.cur[i]] !== D.fx.base) {
        to.appendChild(document.createElement("br"));
        span(to, "≈ " + D.fx.base + " " + fx.format(cv) + " converted", "muted");
      }
    },
    age: (to, i) => {
      const a = C.age[i];
      to.append(a === null ? "—" : a === 0 ? "tonight"
        : fmt.format(a) + (a === 1 ? " day" : " days"));
      if (C.first[i] !== null) to.title = "first seen in run " + D.firstSeen[C.first[i]];
    },
    detail: (to, i) => { to.append(C.detail[i] || ""); },
    work: (to, i) => {
      to.append(C.work[i] === null ? "—" : D.works[C.work[i]].replace("_", " "));
      if (C.owner[i] !== null) {
        to.appendChild(document.createElement("br"));
        span(to, D.owners[C.owner[i]], "owner");
      }
      if (C.lapsed[i]) {
        to.appendChild(document.createElement("br"));
        span(to, "lapsed: " + C.lapsed[i], "muted");
      }
    },
  };
  const COLUMNS = [["check", "check"], ["sev", ""], ["state", ""], ["id", "id"],
    ["issue", ""], ["amount", "amt"], ["age", "n"], ["detail", "detail"], ["work", "work"]];

  // In a row listing several problems, the k-th line of every cell is one problem: give
  // each line the height of its tallest cell, so that a problem reads straight across.
  // All heights are read first, then all written (one layout).
  const align = () => {
    const rows = el.body.querySelectorAll("tr.several");
    const plan = [];
    for (const tr of rows) {
      const cells = [...tr.querySelectorAll("td.problems")];
      for (const c of cells) for (const line of c.children) line.style.minHeight = "";
      const k = cells.length ? cells[0].children.length : 0;
      for (let j = 0; j < k; j++) {
        const lines = cells.map((c) => c.children[j]);
        plan.push([lines, Math.max(...lines.map((line) => line.offsetHeight))]);
      }
    }
    for (const [lines, h] of plan) for (const line of lines) line.style.minHeight = h + "px";
  };
  let resizing = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(align, 150);
  });

  let renders = 0; // how many times the rows were drawn (benchmarks wait on it)
  const render = () => {
    root.dataset.renders = String(++renders);
    const size = Number(el.size.value) || 50;
    const pages = Math.max(1, Math.ceil(itemTotal() / size));
    page = Math.min(Math.max(page, 0), pages - 1);
    const start = page * size;
    const end = Math.min(itemTotal(), start + size);
    const frag = document.createDocumentFragment();
    for (let j = start; j < end; j++) {
      const item = itemAt(j);
      const first = item[0];
      const tr = document.createElement("tr");
      if (item.length > 1) tr.className = "several";
      for (const [name, cls] of COLUMNS) {
        if (name === "id") {
          const id = cell(tr, C.id[first], "id");
          id.appendChild(document.createElement("br"));
          span(id, D.entities[C.entity[first]], "muted");
          if (item.length > 1) {
            id.appendChild(document.createElement("br"));
            span(id, item.length + " problems", "problems-count");
          }
          continue;
        }
        const td = cell(tr, "", cls + (item.length > 1 ? " problems" : ""));
        if (item.length === 1) {
          show[name](td, first);
        } else {
          for (const i of item) {
            const line = document.createElement("div");
            show[name](line, i);
            td.appendChild(line);
          }
        }
      }
      frag.appendChild(tr);
    }
    el.body.replaceChildren(frag);
    align();
    el.status.textContent = n === 0 ? "No findings in this run."
      : matched.length === 0
        ? `No finding matches these filters (${fmt.format(n)} in this run).`
        : items === null
          ? `Showing ${fmt.format(start + 1)}–${fmt.format(end)} of ${fmt.format(matched.length)}`
            + ` matching findings (${fmt.format(n)} in this run).`
          : `Showing items ${fmt.format(start + 1)}–${fmt.format(end)} of ${fmt.format(itemTotal())}`
            + ` with ${fmt.format(matched.length)} matching findings (${fmt.format(n)} in this run;`
            + " an item with several problems is one row).";
    el.page.textContent = `Page ${fmt.format(page + 1)} of ${fmt.format(pages)}`;
    // printed pages lose the controls: say which filters made these rows
    const chosen = [el.q.value.trim() ? `search "${el.q.value.trim()}"` : ""];
    for (const s of [el.check, el.severity, el.currency, el.state, el.work, el.owner]) {
      if (s.value !== "") chosen.push(s.labels[0].textContent + ": " + s.selectedOptions[0].text);
    }
    chosen.push("sorted by " + el.sort.selectedOptions[0].text.toLowerCase());
    chosen.push(`page ${page + 1} of ${pages}`);
    el.filters.textContent = "Filters: " + chosen.filter(Boolean).join("; ") + ".";
    el.prev.disabled = page === 0;
    el.next.disabled = page >= pages - 1;
    el.hint.hidden = !((el.sort.value.startsWith("amount") || el.sort.value.startsWith("converted"))
      && el.currency.value === "" && D.currencies.length > 1);
  };

  let timer = 0;
  el.q.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(filter, 120);
  });
  for (const s of [el.check, el.severity, el.currency, el.state, el.work, el.owner, el.sort]) {
    s.addEventListener("change", filter);
  }
  el.size.addEventListener("change", () => { page = 0; render(); });
  el.prev.addEventListener("click", () => { page -= 1; render(); });
  el.next.addEventListener("click", () => { page += 1; render(); });
  el.form.addEventListener("submit", (e) => { e.preventDefault(); filter(); });
  el.form.addEventListener("reset", () => setTimeout(filter, 0));
  filter();
  root.setAttribute("aria-busy", "false");
  // for benchmarks: ms from navigation start, and ms spent in this script
  document.documentElement.dataset.exploreReady = String(Math.round(performance.now()));
  document.documentElement.dataset.exploreScript = String(Math.round(performance.now() - started));
})();
