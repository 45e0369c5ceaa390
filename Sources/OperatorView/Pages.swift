import Foundation
import HTTPTypes
import Mustache
import TransactionStore
import TransactionViews
import VerifyModel

/// The HTML pages, rendered on the server from embedded Mustache templates (`{{ }}` escapes every value; text
/// from the store shows its control and bidirectional characters as `\u{..}`, as `status` does);
/// the dashboard's script then keeps its counts and table current. Which keys a document has is shown, never
/// their values: the store's reports carry none.
struct Pages: Sendable {
    let dashboard: MustacheTemplate
    let transaction: MustacheTemplate
    let reviews: MustacheTemplate

    /// `signOut`: the header carries a sign-out button (a server with a token, whose browsers hold sessions).
    init(signOut: Bool = false) throws {
        dashboard = try MustacheTemplate(string: Self.layout(title: "verify-pipeline", body: Self.dashboardBody, signOut: signOut))
        transaction = try MustacheTemplate(
            string: Self.layout(title: "Transaction {{id}} · verify-pipeline", body: Self.transactionBody, signOut: signOut))
        reviews = try MustacheTemplate(string: Self.layout(title: "Review queue · verify-pipeline", body: Self.reviewsBody, signOut: signOut))
    }

    /// `/`: counts by status, documents per minute, open reviews and failed documents by code, the latest
    /// transactions (filtered, searched).
    func dashboard(
        _ overview: StoreOverview, perMinute: Double, throughput: [Int] = [], page: TransactionPage, state: DocumentSubmissionStatus?,
        search: String?, limit: Int, reviews: ReviewCounts, now: Date = Date()
    ) -> String {
        let total = overview.transactions.values.reduce(0, +)
        let counts = DocumentSubmissionStatus.allCases.map { status -> [String: Any] in
            ["status": status.rawValue, "count": overview.transactions[status] ?? 0]
        }
        let states = DocumentSubmissionStatus.allCases.map { status -> [String: Any] in
            ["value": status.rawValue, "selected": status == state]
        }
        // A key left out is false to Mustache; an empty string is not.
        var context: [String: Any] = [
            "total": total, "counts": counts, "perMinute": String(format: "%.1f", perMinute), "states": states,
            "search": search ?? "", "rows": page.transactions.map { Self.row($0, now: now) }, "empty": page.transactions.isEmpty, "limit": limit
        ]
        if let next = page.next { context["next"] = Self.query(state: state, search: search, after: next) }
        context["bars"] = Self.bars(throughput)
        context["chartTop"] = throughput.max() ?? 0
        context["reviewsOpen"] = reviews.open.values.reduce(0, +)
        let codes = Set(reviews.failed.keys).union(reviews.open.keys).sorted()
        if !codes.isEmpty {
            context["anyFailures"] = true
            context["failures"] = codes.map { code -> [String: Any] in
                [
                    "code": code.escapingControls, "failed": reviews.failed[code] ?? 0, "open": reviews.open[code] ?? 0,
                    "href": Self.reviewQuery(state: nil, code: code, offset: 0)
                ]
            }
        }
        return dashboard.render(context)
    }

    /// `/transactions/{id}`: statuses, timestamps, documents and their submissions, the history as a timeline.
    func transaction(_ report: TransactionReport, now: Date = Date()) -> String {
        let transaction = report.transaction
        let documents = transaction.state.documents.keys.sorted().map { type -> [String: Any] in
            [
                "type": type.rawValue, "status": transaction.state.documents[type]!.rawValue,
                "policy": transaction.policy[type]!.rawValue,
                "documents": report.documents.filter { $0.type == type }.map { document -> [String: Any] in
                    var row: [String: Any] = [
                        "id": document.id, "source": document.source.escapingControls, "keys": document.keys.map(\.rawValue).joined(separator: ", "),
                        "submission": document.submission.map { "\($0.outcome.rawValue), \($0.attempts) attempt\($0.attempts == 1 ? "" : "s")" }
                            ?? "not submitted"
                    ]
                    if let error = document.submission?.error { row["error"] = error.escapingControls }
                    return row
                }
            ]
        }
        let history = report.history.map { step -> [String: Any] in
            [
                "at": Self.time(step.at, now: now), "subject": step.documentType?.rawValue ?? "transaction", "from": step.from, "to": step.to,
                "reason": step.reason.escapingControls, "isTransaction": step.documentType == nil
            ]
        }
        var context: [String: Any] = [
            "id": transaction.id.escapingControls, "status": transaction.state.submissionStatus.rawValue,
            "created": Self.time(transaction.createdAt, now: now), "updated": Self.time(transaction.updatedAt, now: now),
            "expires": Self.time(transaction.expiresAt, now: now), "expired": now > transaction.expiresAt,
            "data": report.data.rawValue, "documents": documents, "history": history,
            "reviews": report.reviews.map { Self.reviewRow($0, now: now) }, "anyReviews": !report.reviews.isEmpty
        ]
        if let purged = transaction.purgedAt { context["purged"] = Self.time(purged, now: now) }
        return self.transaction.render(context)
    }

    /// `/review`: a page of the review queue, and the filters it was asked with.
    func reviews(_ page: ReviewPage, filter: ReviewFilter, offset: Int, now: Date = Date()) -> String {
        // The `state` asked for: `all`, or the one state shown (open unless asked otherwise).
        let state = filter.states.flatMap { $0.count == 1 ? $0.first : nil }
        let shown = filter.states == nil ? "all" : state?.rawValue ?? ReviewState.open.rawValue
        let states = (["all"] + ReviewState.allCases.map(\.rawValue)).map { value -> [String: Any] in
            ["value": value, "selected": value == shown]
        }
        var context: [String: Any] = [
            "rows": page.entries.map { Self.reviewRow($0, now: now) }, "empty": page.entries.isEmpty, "states": states,
            "code": (filter.code ?? "").escapingControls, "shown": shown
        ]
        if let next = page.next { context["next"] = Self.reviewQuery(state: shown, code: filter.code, offset: Int(next)) }
        if offset > 0 { context["first"] = Self.reviewQuery(state: shown, code: filter.code, offset: 0) }
        return reviews.render(context)
    }

    /// A review as the pages show it: its reasons (code, field, message), never a value.
    static func reviewRow(_ entry: ReviewEntry, now: Date) -> [String: Any] {
        var row: [String: Any] = [
            "id": entry.id, "type": entry.documentType?.rawValue ?? "-", "state": entry.state.rawValue, "kind": entry.kind.rawValue,
            "code": entry.code.escapingControls, "field": (entry.field ?? "-").escapingControls, "message": entry.message.escapingControls,
            "source": entry.source.escapingControls, "attempt": entry.attempt, "failed": time(entry.failedAt, now: now),
            "age": Age.text(now.timeIntervalSince(entry.failedAt)), "inputs": entry.inputs.rawValue,
            "expires": entry.expiresAt.map { time($0, now: now) } ?? ["iso": "", "human": "-"]
        ]
        if let id = entry.transactionId {
            row["transaction"] = id.escapingControls
            row["href"] = href(id)
        }
        if let resolved = entry.resolvedAt {
            row["resolved"] = time(resolved, now: now)
            if let by = entry.resolvedBy { row["resolvedBy"] = by.escapingControls }
            if let resolution = entry.resolution { row["resolution"] = resolution.escapingControls }
        }
        return row
    }

    /// A page of the review queue's path.
    static func reviewQuery(state: String?, code: String?, offset: Int) -> String {
        var components = URLComponents()
        let items = [
            state.map { URLQueryItem(name: "state", value: $0) },
            code.map { URLQueryItem(name: "code", value: $0) },
            offset > 0 ? URLQueryItem(name: "offset", value: String(offset)) : nil
        ].compactMap { $0 }
        components.queryItems = items.isEmpty ? nil : items
        return "/review" + (components.string ?? "")
    }

    /// A transaction list's row; its document badges in `DocumentType`'s order (the script keeps the same).
    static func row(_ summary: TransactionSummary, now: Date) -> [String: Any] {
        [
            "id": summary.id.escapingControls, "href": href(summary.id), "status": summary.status.rawValue, "data": summary.data.rawValue,
            "updated": time(summary.updatedAt, now: now), "expired": now > summary.expiresAt,
            "documents": summary.documents.keys.sorted().map { ["type": $0.rawValue, "status": summary.documents[$0]!.rawValue] }
        ]
    }

    /// The throughput chart's bars, oldest first, in a 600×90 box: one a minute, scaled to the busiest minute.
    static func bars(_ counts: [Int]) -> [[String: Any]] {
        guard !counts.isEmpty else { return [] }
        let top = Double(max(1, counts.max() ?? 1))
        let width = 600.0 / Double(counts.count)
        return counts.enumerated().map { index, count in
            let height = count == 0 ? 0 : max(1, (Double(count) / top * 86).rounded())
            return [
                "x": String(format: "%.1f", Double(index) * width), "y": String(format: "%.0f", 90 - height),
                "width": String(format: "%.1f", width * 0.8), "height": String(format: "%.0f", height), "count": count,
                "ago": counts.count - 1 - index
            ]
        }
    }

    /// A time as the pages show it: how long ago (or how soon) in words, the exact time on hover (`title`) and in
    /// `datetime`; a time over a day away as its date and minute, UTC.
    static func time(_ date: Date, now: Date) -> [String: String] {
        let iso = Timestamp.string(date)
        let seconds = now.timeIntervalSince(date)
        let human: String
        if abs(seconds) < 86_400 {
            human = seconds >= 0 ? Age.text(seconds) + " ago" : "in " + Age.text(-seconds)
        } else {
            human = date.formatted(
                Date.VerbatimFormatStyle(
                    format:
                        "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits) UTC",
                    timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
        }
        return ["iso": iso, "human": human]
    }

    /// An error page in the pages' layout: the status, the server's sentence, the way back.
    static func errorPage(status: HTTPResponse.Status, message: String) -> String {
        let body = """
            <section class="error-page">
              <h1><span class="code">\(status.code)</span> \(status.reasonPhrase.htmlEscaped)</h1>
              <p>\(message.htmlEscaped)</p>
              <p><a href="/">Back to the dashboard</a></p>
            </section>
            """
        return layout(title: "\(status.code) \(status.reasonPhrase.htmlEscaped) · verify-pipeline", body: body, signOut: false)
    }

    /// A transaction page's path: the id percent-encoded as one path segment.
    static func href(_ id: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%")
        return "/transactions/" + (id.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
    }

    static func query(state: DocumentSubmissionStatus?, search: String?, after: TransactionCursor) -> String {
        var components = URLComponents()
        components.queryItems = [
            state.map { URLQueryItem(name: "state", value: $0.rawValue) },
            search.map { URLQueryItem(name: "search", value: $0) },
            URLQueryItem(name: "after", value: after.text)
        ].compactMap { $0 }
        return "/" + (components.string ?? "")
    }

    static func layout(title: String, body: String, signOut: Bool) -> String {
        let signOutForm =
            signOut ? "<form class=\"signout\" method=\"post\" action=\"/logout\"><button type=\"submit\">Sign out</button></form>" : ""
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title)</title>
            <link rel="stylesheet" href="/assets/view.css">
            <script src="/assets/view.js" defer></script>
            </head>
            <body>
            <header><a href="/" class="brand">verify-pipeline</a><span class="tag">operator's view</span><nav><a href="/">Transactions</a><a href="/review">Review queue</a></nav>\(signOutForm)</header>
            <main>
            \(body)
            </main>
            </body>
            </html>

            """
    }

    static let dashboardBody = """
        <section class="counts" id="counts">
          <div class="count total"><span class="label">transactions</span><span class="value" data-count="TOTAL">{{total}}</span></div>
          {{#counts}}<div class="count status-{{status}}"><span class="label">{{status}}</span><span class="value" data-count="{{status}}">{{count}}</span></div>
          {{/counts}}
          <div class="count rate"><span class="label">documents / minute</span><span class="value" id="per-minute">{{perMinute}}</span></div>
          <div class="count reviews"><span class="label"><a href="/review">open reviews</a></span><span class="value" id="reviews-open">{{reviewsOpen}}</span></div>
        </section>
        <figure class="chart">
          <figcaption>Documents collected per minute, the last hour</figcaption>
          <svg id="throughput" viewBox="0 0 600 90" preserveAspectRatio="none" role="img" aria-label="documents collected per minute, the last hour">{{#bars}}<rect x="{{x}}" y="{{y}}" width="{{width}}" height="{{height}}"><title>{{count}} documents, {{ago}} min ago</title></rect>{{/bars}}</svg>
          <span class="chart-scale" id="throughput-scale">busiest minute: {{chartTop}}</span>
        </figure>
        {{#anyFailures}}<table class="failures">
          <thead><tr><th>Failed documents by code</th><th>Failed (attempts)</th><th>Open reviews</th></tr></thead>
          <tbody>
          {{#failures}}<tr class="failure"><td><a href="{{href}}">{{code}}</a></td><td>{{failed}}</td><td>{{open}}</td></tr>
          {{/failures}}
          </tbody>
        </table>{{/anyFailures}}
        <form class="filters" method="get" action="/">
          <label>Status <select name="state"><option value="">any</option>{{#states}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/states}}</select></label>
          <label>Transaction id <input type="search" name="search" value="{{search}}" placeholder="contains…"></label>
          <button type="submit">Show</button>
        </form>
        <table class="transactions">
          <thead><tr><th>Transaction</th><th>Status</th><th>Documents</th><th>Data</th><th>Updated</th></tr></thead>
          <tbody id="rows" data-limit="{{limit}}">
          {{#rows}}<tr><td><a href="{{href}}">{{id}}</a></td><td><span class="status status-{{status}}">{{status}}</span></td><td>{{#documents}}<span class="doc doc-{{status}}">{{type}} {{status}}</span> {{/documents}}</td><td>{{data}}</td><td><time datetime="{{updated.iso}}" title="{{updated.iso}}">{{updated.human}}</time>{{#expired}} <span class="badge expired">expired</span>{{/expired}}</td></tr>
          {{/rows}}
          </tbody>
        </table>
        {{#empty}}<p class="empty" id="empty">No transactions.</p>{{/empty}}
        {{#next}}<p><a class="more" href="{{next}}">Older transactions →</a></p>{{/next}}
        """

    static let transactionBody = """
        <h1>Transaction <span class="id">{{id}}</span> <span class="status status-{{status}}">{{status}}</span>{{#expired}} <span class="badge expired">expired</span>{{/expired}}</h1>
        <dl class="times">
          <dt>created</dt><dd><time datetime="{{created.iso}}" title="{{created.iso}}">{{created.human}}</time></dd>
          <dt>updated</dt><dd><time datetime="{{updated.iso}}" title="{{updated.iso}}">{{updated.human}}</time></dd>
          <dt>expires</dt><dd><time datetime="{{expires.iso}}" title="{{expires.iso}}">{{expires.human}}</time>{{#expired}} <span class="badge expired">expired</span>{{/expired}}</dd>
          <dt>data</dt><dd>{{data}}{{#purged}} at <time datetime="{{purged.iso}}" title="{{purged.iso}}">{{purged.human}}</time>{{/purged}}</dd>
        </dl>
        <h2>Documents</h2>
        <table class="documents">
          <thead><tr><th>Type</th><th>Status</th><th>Policy</th><th>Documents (keys only) and submissions</th></tr></thead>
          <tbody>
          {{#documents}}<tr><td>{{type}}</td><td><span class="doc doc-{{status}}">{{status}}</span></td><td>{{policy}}</td><td>{{#documents}}<div class="document"><code>{{id}}</code> from {{source}}: {{submission}}{{#error}} ({{error}}){{/error}}<br><span class="keys">{{keys}}</span></div>{{/documents}}</td></tr>
          {{/documents}}
          </tbody>
        </table>
        {{#anyReviews}}<h2>Reviews</h2>
        <table class="reviews">
          <thead><tr><th>Review</th><th>Type</th><th>State</th><th>Code</th><th>Field</th><th>Reason</th><th>Attempt</th><th>Failed</th><th>Inputs</th></tr></thead>
          <tbody>
          {{#reviews}}<tr><td>{{id}}</td><td>{{type}}</td><td><span class="review review-{{state}}">{{state}}</span>{{#resolved}} <time datetime="{{resolved.iso}}" title="{{resolved.iso}}">{{resolved.human}}</time>{{/resolved}}{{#resolvedBy}} by {{resolvedBy}}{{/resolvedBy}}{{#resolution}} ({{resolution}}){{/resolution}}</td><td>{{code}}</td><td>{{field}}</td><td>{{message}}</td><td>{{attempt}}</td><td><time datetime="{{failed.iso}}" title="{{failed.iso}}">{{failed.human}}</time></td><td>{{inputs}}</td></tr>
          {{/reviews}}
          </tbody>
        </table>{{/anyReviews}}
        <h2>History</h2>
        <ol class="timeline">
          {{#history}}<li class="{{#isTransaction}}transaction{{/isTransaction}}"><time datetime="{{at.iso}}" title="{{at.iso}}">{{at.human}}</time> <strong>{{subject}}</strong> {{from}} → {{to}} <span class="reason">{{reason}}</span></li>
          {{/history}}
        </ol>
        """

    static let reviewsBody = """
        <h1>Review queue <span class="status">{{shown}}</span></h1>
        <form class="filters" method="get" action="/review">
          <label>State <select name="state">{{#states}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/states}}</select></label>
          <label>Code <input type="search" name="code" value="{{code}}" placeholder="documentCaptureError"></label>
          <button type="submit">Show</button>
        </form>
        <table class="reviews">
          <thead><tr><th>Id</th><th>Transaction</th><th>Type</th><th>State</th><th>Code</th><th>Field</th><th>Reason</th><th>Age</th><th>Expires</th></tr></thead>
          <tbody id="reviews">
          {{#rows}}<tr><td>{{id}}</td><td>{{#href}}<a href="{{href}}">{{transaction}}</a>{{/href}}{{^href}}unattached{{/href}}</td><td>{{type}}</td><td><span class="review review-{{state}}">{{state}}</span></td><td>{{code}}</td><td>{{field}}</td><td>{{message}}</td><td>{{age}}</td><td><time datetime="{{expires.iso}}" title="{{expires.iso}}">{{expires.human}}</time></td></tr>
          {{/rows}}
          </tbody>
        </table>
        {{#empty}}<p class="empty">No reviews.</p>{{/empty}}
        <p>{{#first}}<a class="more" href="{{first}}">← First page</a> {{/first}}{{#next}}<a class="more" href="{{next}}">Next →</a>{{/next}}</p>
        """
}

extension String {
    /// The text as HTML character data: `& < > " '` escaped.
    var htmlEscaped: String {
        var escaped = ""
        escaped.reserveCapacity(utf8.count)
        for character in self {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
