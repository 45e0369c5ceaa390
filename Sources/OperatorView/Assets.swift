/// The view's only stylesheet and script, embedded: the pages work without any network but this server's, and the
/// Content-Security-Policy allows nothing else.
enum Assets {
    static let css = """
        :root { --ink: #1d2433; --muted: #5b6475; --line: #dde1e8; --paper: #f7f8fa; --accent: #2156c9; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--paper); }
        header { display: flex; gap: 12px; align-items: baseline; padding: 14px 24px; background: #fff; border-bottom: 1px solid var(--line); }
        header .brand { font-weight: 700; color: var(--ink); text-decoration: none; font-size: 16px; }
        header .tag { color: var(--muted); }
        main { padding: 20px 24px; max-width: 1200px; }
        .counts { display: flex; flex-wrap: wrap; gap: 12px; margin-bottom: 18px; }
        .count { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; min-width: 140px; }
        .count .label { display: block; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
        .count .value { font-size: 24px; font-weight: 600; }
        .filters { display: flex; gap: 14px; align-items: end; margin-bottom: 12px; }
        .filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 4px; }
        input, select, button { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
        button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
        table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
        th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
        a { color: var(--accent); }
        .status, .doc { display: inline-block; padding: 1px 7px; border-radius: 10px; font-size: 12px; background: #eef0f4; margin: 1px 0; }
        .status-COMPLETED, .doc-PROCESSED { background: #dcf3e3; color: #14612e; }
        .status-PROCESS, .doc-COLLECTED { background: #fff1cc; color: #7a5400; }
        .status-STARTED { background: #e3ecff; color: #1d3f8f; }
        .status-NOT_STARTED, .doc-REQUIRED { background: #f1f1f1; color: #444; }
        .doc-SKIPPED { background: #f5f0ff; color: #5a3d99; }
        h1 { font-size: 20px; } h1 .id { font-family: ui-monospace, monospace; }
        dl.times { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
        dt { color: var(--muted); }
        .keys { color: var(--muted); font-size: 12px; }
        .timeline { list-style: none; padding-left: 0; border-left: 2px solid var(--line); margin-left: 8px; }
        .timeline li { position: relative; padding: 4px 0 8px 18px; }
        .timeline li::before { content: ""; position: absolute; left: -7px; top: 9px; width: 12px; height: 12px; border-radius: 50%; background: #fff; border: 2px solid var(--accent); }
        .timeline li.transaction::before { background: var(--accent); }
        .timeline time { font-family: ui-monospace, monospace; color: var(--muted); font-size: 12px; margin-right: 6px; }
        .reason { color: var(--muted); }
        .empty { color: var(--muted); }
        table.failures, table.reviews { margin-bottom: 18px; }
        .review { display: inline-block; padding: 1px 7px; border-radius: 10px; font-size: 12px; background: #eef0f4; }
        .review-open { background: #fde2e1; color: #8a1c17; }
        .review-accepted, .review-replayed, .review-resolved { background: #dcf3e3; color: #14612e; }
        header nav { display: flex; gap: 14px; margin-left: 18px; }
        header nav a { color: var(--muted); text-decoration: none; }
        header nav a:hover { color: var(--accent); }
        header .signout { margin-left: auto; }
        header .signout button { background: #fff; color: var(--ink); border-color: var(--line); }
        .badge { display: inline-block; padding: 1px 7px; border-radius: 10px; font-size: 11px; text-transform: uppercase; letter-spacing: .04em; }
        .badge.expired { background: #fde2e1; color: #8a1c17; }
        time[title] { cursor: help; border-bottom: 1px dotted var(--line); }
        .chart { margin: 0 0 18px; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; position: relative; }
        .chart figcaption { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; margin-bottom: 6px; }
        .chart svg { width: 100%; height: 90px; display: block; border-bottom: 1px solid var(--line); }
        .chart rect { fill: var(--accent); opacity: .85; }
        .chart-scale { position: absolute; top: 10px; right: 14px; color: var(--muted); font-size: 12px; }
        .error-page { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 24px 28px; max-width: 640px; }
        .error-page h1 { margin-top: 0; } .error-page .code { color: #8a1c17; font-family: ui-monospace, monospace; }
        p.error { background: #fde2e1; color: #8a1c17; padding: 8px 12px; border-radius: 6px; }
        """

    /// Keeps the dashboard's counts and first page current by short polling; builds rows with DOM calls and
    /// textContent only, so no text from the store is ever parsed as HTML.
    static let js = """
        "use strict";
        (function () {
          const rows = document.getElementById("rows");
          if (!rows) return;
          const params = new URLSearchParams(location.search);
          if (params.has("after")) return; // an older page stays as it was served
          // As many rows as the server rendered (the dashboard's page size), so a poll never drops any.
          const list = new URLSearchParams({ limit: rows.dataset.limit || "50" });
          if (params.get("state")) list.set("state", params.get("state"));
          if (params.get("search")) list.set("search", params.get("search"));
          // Control and bidirectional characters shown as \\u{..}, as the server's pages and `status` show them.
          function visible(text) {
            return String(text).replace(/[\\u0000-\\u001f\\u007f-\\u009f\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]/g,
              (c) => "\\\\u{" + c.charCodeAt(0).toString(16).toUpperCase() + "}");
          }
          // Badges in DocumentType's order, as the server renders them, so that a refresh never reorders them.
          const typeOrder = ["GOVERNMENT_ID", "SELFIE", "EMAIL", "PHONE"];
          function byType(a, b) {
            const x = typeOrder.indexOf(a), y = typeOrder.indexOf(b);
            return (x < 0 ? typeOrder.length : x) - (y < 0 ? typeOrder.length : y) || (a < b ? -1 : a > b ? 1 : 0);
          }
          // How long ago in the largest whole unit, as the server's pages say it; the exact time on hover.
          function ago(iso) {
            const seconds = (Date.now() - Date.parse(iso)) / 1000;
            const future = seconds < 0, s = Math.abs(seconds);
            if (!(s < 86400)) return iso.slice(0, 10) + " " + iso.slice(11, 16) + " UTC";
            const text = s < 60 ? Math.floor(s) + "s" : s < 3600 ? Math.floor(s / 60) + "m" : Math.floor(s / 3600) + "h";
            return future ? "in " + text : text + " ago";
          }
          function timeCell(row, iso, expired) {
            const td = cell(row, "");
            const time = document.createElement("time");
            time.dateTime = iso; time.title = iso; time.textContent = ago(iso);
            td.appendChild(time);
            if (expired) {
              const badge = document.createElement("span");
              badge.className = "badge expired"; badge.textContent = "expired";
              td.appendChild(document.createTextNode(" ")); td.appendChild(badge);
            }
          }
          // The throughput chart: a bar a minute for the last hour, redrawn from each poll, as the server draws it.
          function draw(counts) {
            const svg = document.getElementById("throughput");
            if (!svg || !Array.isArray(counts) || counts.length === 0) return;
            const top = Math.max(1, ...counts), width = 600 / counts.length;
            const bars = document.createDocumentFragment();
            counts.forEach((count, index) => {
              const height = count === 0 ? 0 : Math.max(1, Math.round(count / top * 86));
              const rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
              rect.setAttribute("x", (index * width).toFixed(1)); rect.setAttribute("y", String(90 - height));
              rect.setAttribute("width", (width * 0.8).toFixed(1)); rect.setAttribute("height", String(height));
              const title = document.createElementNS("http://www.w3.org/2000/svg", "title");
              title.textContent = count + " documents, " + (counts.length - 1 - index) + " min ago";
              rect.appendChild(title);
              bars.appendChild(rect);
            });
            svg.replaceChildren(bars);
            const scale = document.getElementById("throughput-scale");
            if (scale) scale.textContent = "busiest minute: " + Math.max(0, ...counts);
          }
          function cell(row, text, className) {
            const td = document.createElement("td");
            if (className) { const span = document.createElement("span"); span.className = className; span.textContent = text; td.appendChild(span); }
            else td.textContent = text;
            row.appendChild(td);
            return td;
          }
          async function refresh() {
            try {
              const overview = await (await fetch("/api/overview", { cache: "no-store" })).json();
              let total = 0;
              for (const [status, count] of Object.entries(overview.transactions)) {
                total += count;
                const element = document.querySelector('[data-count="' + status + '"]');
                if (element) element.textContent = String(count);
              }
              const totalElement = document.querySelector('[data-count="TOTAL"]');
              if (totalElement) totalElement.textContent = String(total);
              document.getElementById("per-minute").textContent = overview.documentsPerMinute.toFixed(1);
              draw(overview.collectedPerMinute);
              const reviewsOpen = document.getElementById("reviews-open");
              if (reviewsOpen) reviewsOpen.textContent = String(overview.reviewsOpen);
              const page = await (await fetch("/api/transactions?" + list.toString(), { cache: "no-store" })).json();
              const fresh = document.createDocumentFragment();
              for (const transaction of page.transactions) {
                const row = document.createElement("tr");
                const link = document.createElement("a");
                link.href = "/transactions/" + encodeURIComponent(transaction.transactionId);
                link.textContent = visible(transaction.transactionId);
                cell(row, "").appendChild(link);
                cell(row, transaction.documentSubmissionStatus, "status status-" + transaction.documentSubmissionStatus);
                const documents = cell(row, "");
                for (const type of Object.keys(transaction.documentStatus).sort(byType)) {
                  const span = document.createElement("span");
                  span.className = "doc doc-" + transaction.documentStatus[type];
                  span.textContent = type + " " + transaction.documentStatus[type];
                  documents.appendChild(span);
                  documents.appendChild(document.createTextNode(" "));
                }
                cell(row, transaction.data);
                timeCell(row, transaction.updatedAt, Date.parse(transaction.expiresAt) < Date.now());
                fresh.appendChild(row);
              }
              rows.replaceChildren(fresh);
              rows.dataset.refreshed = String(page.transactions.length);
            } catch (error) {
              // The next poll tries again.
            }
          }
          refresh();
          setInterval(refresh, 3000);
        })();
        """
}
