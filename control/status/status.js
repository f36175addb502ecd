// SPDX-License-Identifier: BSD-3-Clause
// Sluice's status page: reads /api/v1/status and /api/v1/series once a
// second and draws them, the plots as SVG. No library, nothing fetched
// but those two.
"use strict";
(function () {
	const API = "/api/v1/";
	const SVGNS = "http://www.w3.org/2000/svg";
	const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
		"#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
	const W = 300, H = 110, PAD = 4;

	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {}))
			if (v !== undefined && v !== null)
				e.setAttribute(k, v);
		for (const k of kids)
			if (k !== undefined && k !== null)
				e.append(k instanceof Node ? k : String(k));
		return e;
	}

	function sv(tag, attrs) {
		const e = document.createElementNS(SVGNS, tag);
		for (const [k, v] of Object.entries(attrs || {}))
			e.setAttribute(k, v);
		return e;
	}

	function num(v, digits) {
		if (v === null || v === undefined || Number.isNaN(v))
			return "-";
		if (typeof v !== "number")
			return String(v);
		if (Number.isInteger(v))
			return v.toLocaleString("en");
		return v.toFixed(digits === undefined ? 2 : digits);
	}

	function last(a) {
		for (let i = (a || []).length - 1; i >= 0; i--)
			if (a[i] !== null)
				return a[i];
		return null;
	}

	function fact(name, value) {
		return el("span", {}, name + " ", el("b", {}, value));
	}

	function table(head, rows) {
		const t = el("table", {});
		t.append(el("tr", {}, ...head.map((h) => el("th", {}, h))));
		for (const r of rows)
			t.append(r);
		return t;
	}

	// One plot: a line per series, gaps where a value is missing, dashed
	// lines for thresholds. data-points counts the points drawn.
	function plot(title, metric, lines, t, iv, opts) {
		opts = opts || {};
		const svg = sv("svg", {class: "plot", width: W, height: H,
			viewBox: `0 0 ${W} ${H}`, "data-metric": metric});
		const tmax = t.length ? t[t.length - 1] : 0;
		const tmin = tmax - iv.span;
		let hi = opts.max !== undefined ? opts.max : 0;
		for (const l of lines.concat(opts.thr || []))
			for (const v of l.values)
				if (v !== null && v > hi && opts.max === undefined)
					hi = v;
		if (hi <= 0)
			hi = 1;
		if (opts.max === undefined)
			hi *= 1.1;
		const x = (ms) => PAD + (W - 2 * PAD) * (ms - tmin) / (tmax - tmin || 1);
		const y = (v) => H - PAD - (H - 2 * PAD) * Math.min(v, hi) / hi;
		svg.append(sv("line", {class: "axis", x1: PAD, y1: H - PAD,
			x2: W - PAD, y2: H - PAD}));
		let drawn = 0;
		const draw = (l, cls) => {
			let seg = [];
			const flush = () => {
				if (seg.length > 0) {
					const p = sv("polyline", {points: seg.join(" ")});
					if (cls)
						p.setAttribute("class", cls);
					else
						p.setAttribute("stroke", l.color);
					p.setAttribute("data-name", l.name);
					svg.append(p);
				}
				seg = [];
			};
			l.values.forEach((v, i) => {
				if (v === null || t[i] < tmin) {
					flush();
					return;
				}
				seg.push(`${x(t[i]).toFixed(1)},${y(v).toFixed(1)}`);
				if (!cls)
					drawn++;
			});
			flush();
		};
		for (const l of opts.thr || [])
			draw(l, "thr");
		for (const l of lines)
			draw(l);
		svg.setAttribute("data-points", drawn);
		const label = (tx, ax, ay, anchor) => {
			const e = sv("text", {x: ax, y: ay, "text-anchor": anchor});
			e.textContent = tx;
			svg.append(e);
		};
		label(num(hi, hi < 10 ? 2 : 0), PAD + 2, 11, "start");
		label(iv.span >= 120000 ? `-${Math.round(iv.span / 60000)}m` :
			`-${Math.round(iv.span / 1000)}s`, PAD + 2, H - PAD - 3, "start");
		label("now", W - PAD - 2, H - PAD - 3, "end");
		return el("figure", {}, el("figcaption", {}, title), svg);
	}

	function stateClass(s) {
		return "st-" + String(s).replace(/[^a-z]/g, "");
	}

	function backendRows(svc, bes, series, color) {
		return bes.filter((b) => b.service === svc).map((b) => {
			const s = series.find((x) => x.backend === b.backend);
			const share = s ? last(s.share) : null;
			const errs = s ? last(s.errors_per_s) : null;
			const l7 = b.l7 || {};
			// Failing now: errors in the last second, or down.
			const failing = errs > 0 || b.health === "down";
			const tr = el("tr", {class: failing ? "be failing" : "be",
				"data-backend": b.backend, "data-errors": errs,
				"data-state": b.state, "data-health": b.health,
				"data-share": share === null ? "" : share.toFixed(4)},
				el("td", {}, el("span", {class: "swatch"}), b.backend),
				el("td", {class: "txt " + stateClass(b.state)}, b.state),
				el("td", {class: "txt h-" + b.health}, b.health),
				el("td", {}, num(b.weight)),
				el("td", {}, share === null ? "-" :
					(100 * share).toFixed(1) + "%"),
				el("td", {}, num(b.flows_active)),
				el("td", {}, num(b.flows_total)),
				el("td", {}, num(b.errors)),
				el("td", {}, num(l7.spl, 3)),
				el("td", {}, l7.window_timed ? `${num(l7.p50_ms)}/${num(l7.p99_ms)}` : "-"),
				el("td", {}, l7.window_responses ? (100 * l7.rate_5xx).toFixed(1) : "-"));
			tr.firstChild.firstChild.style.background = color(b.backend);
			return tr;
		});
	}

	function serviceCard(sv_, bes, ss, t, iv) {
		const name = sv_.service;
		const series = ss ? ss.backends : [];
		const names = bes.filter((b) => b.service === name).map((b) => b.backend);
		const color = (n) => COLORS[Math.max(0, names.indexOf(n)) % COLORS.length];
		const card = el("div", {class: "svc", "data-service": name});
		const spl = sv_.spl || {};
		const facts = el("div", {class: "facts"},
			fact("state", sv_.state), fact("sched", sv_.sched),
			fact("flows", num(sv_.flows_active) + " active, " +
				num(sv_.flows_total) + " total"),
			fact("new flows/s", num(ss ? last(ss.flows_per_s) : null, 1)),
			fact("errors", num(sv_.errors)));
		if (sv_.http) {
			facts.append(fact("in flight", num(sv_.http_inflight)),
				fact("SPL load", `${num(spl.total, 3)} (${num(spl.lower)}..${num(spl.upper)}): ${spl.decision || "-"}`));
		}
		const v = (sv_.admit || {}).verdicts || {};
		const refused = Object.entries(v).filter(([k, n]) => k !== "admitted" && n > 0);
		if (refused.length)
			facts.append(fact("admission", refused.map(([k, n]) => `${k} ${num(n)}`).join(", ")));
		card.append(el("h2", {}, name), facts);
		card.append(table(["backend", "state", "health", "weight", "share",
			"active", "flows", "errors", "SPL", "p50/p99 ms", "5xx %"],
			backendRows(name, bes, series, color)));
		const lines = (m) => series.map((s) => ({name: s.backend,
			color: color(s.backend), values: s[m] || []}));
		const plots = el("div", {class: "plots"},
			plot("share of new flows", "share", lines("share"), t, iv, {max: 1}),
			plot("errors / s", "errors_per_s", lines("errors_per_s"), t, iv));
		if (sv_.http) {
			plots.append(plot("SPL", "spl", lines("spl"), t, iv),
				plot("p99 latency, ms", "p99_ms", lines("p99_ms"), t, iv));
		}
		if (ss) {
			const one = (m, n) => [{name: n, color: COLORS[0], values: ss[m] || []}];
			if (sv_.http)
				plots.append(plot("load against its thresholds", "load",
					one("load", "load"), t, iv, {thr: [
						{name: "lower", values: ss.lower || []},
						{name: "upper", values: ss.upper || []}]}));
			plots.append(plot("instances taking new flows", "instances",
				one("instances", "instances"), t, iv),
				plot("new flows / s", "flows_per_s",
					one("flows_per_s", "flows/s"), t, iv));
		}
		card.append(plots);
		return card;
	}

	function renderScale(sc) {
		const box = document.getElementById("scale");
		const svcs = (sc && sc.services) || [];
		box.replaceChildren();
		if (!svcs.length) {
			box.append(el("p", {class: "none"}, "no autoscaled service"));
			return;
		}
		for (const s of svcs) {
			const d = ((s.history || {}).decisions || []).slice(-10).reverse();
			box.append(el("h3", {}, s.service + (s.paused ? " (paused)" : "")),
				table(["ago", "mode", "policy", "load", "running",
					"pending", "desired", "action", "count", "reason"],
				d.map((x) => el("tr", {class: "decision"},
					el("td", {}, num(x.ago_s, 1) + " s"),
					el("td", {class: "txt"}, x.manual ? "manual" : "auto"),
					el("td", {class: "txt"}, x.policy),
					el("td", {}, num(x.load, 3)),
					el("td", {}, num(x.running)),
					el("td", {}, num(x.pending)),
					el("td", {}, num(x.desired)),
					el("td", {class: "txt"}, x.action),
					el("td", {}, num(x.count)),
					el("td", {class: "txt"}, x.reason)))));
		}
	}

	function renderGovernor(g) {
		const box = document.getElementById("governor");
		box.replaceChildren();
		if (!g) {
			box.append(el("p", {class: "none"}, "no governor"));
			return;
		}
		const f = el("div", {class: "facts"});
		for (const [k, v] of Object.entries(g))
			if (typeof v === "number")
				f.append(fact(k, num(v)));
			else if (v && typeof v === "object" && !Array.isArray(v))
				f.append(fact(k, Object.entries(v).map(([a, b]) => `${a} ${num(b)}`).join(", ")));
		box.append(f);
		const rows = (g.services || []).map((s) => el("tr", {},
			el("td", {}, s.service), el("td", {class: "txt"}, s.mode),
			el("td", {}, num(s.m, 3)), el("td", {}, num(s.miss_pct, 1)),
			el("td", {class: s.overloaded ? "txt st-down" : "txt"},
				s.overloaded ? "yes" : "no"),
			el("td", {}, num(s.calm_windows)),
			el("td", {}, num(s.window_rate_rps, 1))));
		if (rows.length)
			box.append(table(["service", "mode", "M", "miss %",
				"overloaded", "calm", "req/s"], rows));
	}

	function renderStats(st) {
		const box = document.getElementById("stats");
		box.replaceChildren();
		for (const [k, v] of Object.entries(st || {})) {
			if (!v || typeof v !== "object" || Array.isArray(v))
				continue;
			const f = el("div", {class: "facts"}, el("b", {}, k + ":"));
			for (const [a, b] of Object.entries(v))
				if (typeof b === "number" || typeof b === "boolean")
					f.append(fact(a, num(b)));
			box.append(f);
		}
	}

	function render(st, se) {
		const svcs = (st.services && st.services.services) || [];
		const bes = (st.backends && st.backends.backends) || [];
		const t = se.t_ms || [];
		// The window grows with the history held, from a minute up to
		// all the ring keeps, so that the first seconds are readable.
		const full = (se.points || 300) * (se.interval_ms || 1000);
		const kept = t.length > 1 ? t[t.length - 1] - t[0] : 0;
		const iv = {span: Math.min(full, Math.max(60000, kept))};
		const box = document.getElementById("services");
		box.replaceChildren(...svcs.map((s) => serviceCard(s, bes,
			(se.services || []).find((x) => x.service === s.service), t, iv)));
		if (!svcs.length)
			box.append(el("p", {class: "none"}, "no service configured"));
		renderScale(st.scale);
		renderGovernor(st.governor);
		renderStats(st.stats);
		const dp = (st.stats || {}).dataplane || {};
		const failing = box.querySelectorAll("tr.failing").length;
		document.getElementById("summary").textContent =
			`${svcs.length} services, ${bes.length} backends` +
			(failing ? `, ${failing} failing` : "") +
			(dp.workers !== undefined ? `, ${dp.workers} workers` : "");
		document.getElementById("updated").textContent =
			"updated " + new Date(st.time_ms).toLocaleTimeString();
		document.body.setAttribute("data-updated", st.time_ms);
	}

	async function get(view) {
		const r = await fetch(API + view, {cache: "no-store"});
		if (!r.ok)
			throw new Error(`${view}: HTTP ${r.status}`);
		return r.json();
	}

	// The series held so far: after the first answer, only the samples
	// taken since the newest one are asked for, and appended here.
	let held = null;

	// Joins two runs of one series, gaps where one side has none.
	function join(a, b, na, nb, drop) {
		return (a || new Array(na).fill(null))
			.concat(b || new Array(nb).fill(null)).slice(drop);
	}

	function mergeOne(old, neu, na, nb, drop) {
		const r = {};
		for (const k of Object.keys(neu))
			r[k] = Array.isArray(neu[k]) && k !== "backends" &&
				k !== "services" ?
				join(old && old[k], neu[k], na, nb, drop) : neu[k];
		return r;
	}

	// Entities the answer no longer names are gone from lb-control's
	// ring: they go from here too.
	function merge(old, neu) {
		if (!old)
			return neu;
		const na = old.t_ms.length, nb = neu.t_ms.length;
		const drop = Math.max(0, na + nb - (neu.points || 300));
		const out = mergeOne(old, neu, na, nb, drop);
		out.services = neu.services.map((s) => {
			const os = old.services.find((x) => x.service === s.service);
			const r = mergeOne(os, s, na, nb, drop);
			r.backends = s.backends.map((b) => mergeOne(
				os && os.backends.find((x) => x.backend === b.backend),
				b, na, nb, drop));
			return r;
		});
		return out;
	}

	async function refresh() {
		const err = document.getElementById("error");
		try {
			const since = held && held.t_ms.length ?
				"?since=" + held.t_ms[held.t_ms.length - 1] : "";
			const [st, se] = await Promise.all([get("status"),
				get("series" + since)]);
			held = merge(held, se);
			render(st, held);
			err.hidden = true;
		} catch (e) {
			err.textContent = "lb-control does not answer: " + e.message;
			err.hidden = false;
		}
		setTimeout(refresh, 1000);
	}

	refresh();
})();
