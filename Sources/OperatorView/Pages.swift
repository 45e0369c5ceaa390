import Foundation
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

    init() throws {
        dashboard = try MustacheTemplate(string: Self.layout(title: "verify-pipeline", body: Self.dashboardBody))
        transaction = try MustacheTemplate(string: Self.layout(title: "Transaction {{id}} · verify-pipeline", body: Self.transactionBody))
        reviews = try MustacheTemplate(string: Self.layout(title: "Review queue · verify-pipeline", body: Self.reviewsBody))
    }

    /// `/`: counts by status, documents per minute, open reviews and failed documents by code, the latest
    /// transactions (filtered, searched).
    func dashboard(
        _ overview: StoreOverview, perMinute: Double, page: TransactionPage, state: DocumentSubmissionStatus?,
        search: String?, limit: Int, reviews: ReviewCounts
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
            "search": search ?? "", "rows": page.transactions.map(Self.row), "empty": page.transactions.isEmpty, "limit": limit
        ]
        if let next = page.next { context["next"] = Self.query(state: state, search: search, after: next) }
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
                "at": Timestamp.string(step.at), "subject": step.documentType?.rawValue ?? "transaction", "from": step.from, "to": step.to,
                "reason": step.reason.escapingControls, "isTransaction": step.documentType == nil
            ]
        }
        var context: [String: Any] = [
            "id": transaction.id.escapingControls, "status": transaction.state.submissionStatus.rawValue,
            "created": Timestamp.string(transaction.createdAt), "updated": Timestamp.string(transaction.updatedAt),
            "expires": Timestamp.string(transaction.expiresAt), "expired": now > transaction.expiresAt,
            "data": report.data.rawValue, "documents": documents, "history": history,
            "reviews": report.reviews.map { Self.reviewRow($0, now: now) }, "anyReviews": !report.reviews.isEmpty
        ]
        if let purged = transaction.purgedAt { context["purged"] = Timestamp.string(purged) }
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
            "source": entry.source.escapingControls, "attempt": entry.attempt, "failed": Timestamp.string(entry.failedAt),
            "age": Age.text(now.timeIntervalSince(entry.failedAt)), "inputs": entry.inputs.rawValue,
            "expires": entry.expiresAt.map(Timestamp.string) ?? "-"
        ]
        if let id = entry.transactionId {
            row["transaction"] = id.escapingControls
            row["href"] = href(id)
        }
        if let resolved = entry.resolvedAt {
            row["resolved"] = Timestamp.string(resolved)
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

    static func row(_ summary: TransactionSummary) -> [String: Any] {
        [
            "id": summary.id.escapingControls, "href": href(summary.id), "status": summary.status.rawValue, "data": summary.data.rawValue,
            "updated": Timestamp.string(summary.updatedAt),
            "documents": summary.documents.keys.sorted().map { ["type": $0.rawValue, "status": summary.documents[$0]!.rawValue] }
        ]
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

    static func layout(title: String, body: String) -> String {
        """
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
        <header><a href="/" class="brand">verify-pipeline</a><span class="tag">operator's view</span></header>
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
          {{#rows}}<tr><td><a href="{{href}}">{{id}}</a></td><td><span class="status status-{{status}}">{{status}}</span></td><td>{{#documents}}<span class="doc doc-{{status}}">{{type}} {{status}}</span> {{/documents}}</td><td>{{data}}</td><td><time>{{updated}}</time></td></tr>
          {{/rows}}
          </tbody>
        </table>
        {{#empty}}<p class="empty" id="empty">No transactions.</p>{{/empty}}
        {{#next}}<p><a class="more" href="{{next}}">Older transactions →</a></p>{{/next}}
        """

    static let transactionBody = """
        <h1>Transaction <span class="id">{{id}}</span> <span class="status status-{{status}}">{{status}}</span></h1>
        <dl class="times">
          <dt>created</dt><dd><time>{{created}}</time></dd>
          <dt>updated</dt><dd><time>{{updated}}</time></dd>
          <dt>expires</dt><dd><time>{{expires}}</time>{{#expired}} (expired){{/expired}}</dd>
          <dt>data</dt><dd>{{data}}{{#purged}} at <time>{{purged}}</time>{{/purged}}</dd>
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
          {{#reviews}}<tr><td>{{id}}</td><td>{{type}}</td><td><span class="review review-{{state}}">{{state}}</span>{{#resolved}} <time>{{resolved}}</time>{{/resolved}}{{#resolvedBy}} by {{resolvedBy}}{{/resolvedBy}}{{#resolution}} ({{resolution}}){{/resolution}}</td><td>{{code}}</td><td>{{field}}</td><td>{{message}}</td><td>{{attempt}}</td><td><time>{{failed}}</time></td><td>{{inputs}}</td></tr>
          {{/reviews}}
          </tbody>
        </table>{{/anyReviews}}
        <h2>History</h2>
        <ol class="timeline">
          {{#history}}<li class="{{#isTransaction}}transaction{{/isTransaction}}"><time>{{at}}</time> <strong>{{subject}}</strong> {{from}} → {{to}} <span class="reason">{{reason}}</span></li>
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
          {{#rows}}<tr><td>{{id}}</td><td>{{#href}}<a href="{{href}}">{{transaction}}</a>{{/href}}{{^href}}unattached{{/href}}</td><td>{{type}}</td><td><span class="review review-{{state}}">{{state}}</span></td><td>{{code}}</td><td>{{field}}</td><td>{{message}}</td><td>{{age}}</td><td><time>{{expires}}</time></td></tr>
          {{/rows}}
          </tbody>
        </table>
        {{#empty}}<p class="empty">No reviews.</p>{{/empty}}
        <p>{{#first}}<a class="more" href="{{first}}">← First page</a> {{/first}}{{#next}}<a class="more" href="{{next}}">Next →</a>{{/next}}</p>
        """
}
