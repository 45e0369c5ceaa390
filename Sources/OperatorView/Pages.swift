import Foundation
import Mustache
import TransactionStore
import TransactionViews
import VerifyModel

/// The two HTML pages, rendered on the server from embedded Mustache templates (`{{ }}` escapes every value; text
/// from the store shows its control and bidirectional characters as `\u{..}`, as `status` does);
/// the dashboard's script then keeps its counts and table current. Which keys a document has is shown, never
/// their values: the store's reports carry none.
struct Pages: Sendable {
    let dashboard: MustacheTemplate
    let transaction: MustacheTemplate

    init() throws {
        dashboard = try MustacheTemplate(string: Self.layout(title: "verify-pipeline", body: Self.dashboardBody))
        transaction = try MustacheTemplate(string: Self.layout(title: "Transaction {{id}} · verify-pipeline", body: Self.transactionBody))
    }

    /// `/`: counts by status, documents per minute, the latest transactions (filtered, searched).
    func dashboard(
        _ overview: StoreOverview, perMinute: Double, page: TransactionPage, state: DocumentSubmissionStatus?,
        search: String?, limit: Int
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
            "data": report.data.rawValue, "documents": documents, "history": history
        ]
        if let purged = transaction.purgedAt { context["purged"] = Timestamp.string(purged) }
        return self.transaction.render(context)
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
        </section>
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
        <h2>History</h2>
        <ol class="timeline">
          {{#history}}<li class="{{#isTransaction}}transaction{{/isTransaction}}"><time>{{at}}</time> <strong>{{subject}}</strong> {{from}} → {{to}} <span class="reason">{{reason}}</span></li>
          {{/history}}
        </ol>
        """
}
