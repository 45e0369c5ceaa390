import TransactionStore
import VerifyModel

/// The JSON API's description, OpenAPI 3.1, served at `/api/openapi.json`. The tests check it against the OpenAPI
/// schema and every route's answers against it, so it says what the server sends: where one drifts, they fail.
enum OpenAPIDocument {
    static var json: String {
        """
        {
          "openapi": "3.1.0",
          "info": {
            "title": "verify-pipeline operator API",
            "version": "\(ToolVersion.current)",
            "description": "Read-only: the store's transactions, their statuses and history, and the review queue. Never a document's values, only which keys it has. With serve --token-env, every route needs Authorization: Bearer TOKEN."
          },
          "servers": [{ "url": "/" }],
          "security": [{}, { "bearer": [] }],
          "paths": {
            "/api/transactions": {
              "get": {
                "operationId": "listTransactions",
                "summary": "Transactions, most recently updated first, a page at a time.",
                "parameters": [
                  { "name": "state", "in": "query", "schema": { "$ref": "#/components/schemas/DocumentSubmissionStatus" } },
                  { "name": "search", "in": "query", "description": "Only ids containing this text.", "schema": { "type": "string", "maxLength": 128 } },
                  { "name": "limit", "in": "query", "schema": { "type": "integer", "minimum": 1, "maximum": 1000, "default": 100 } },
                  { "name": "after", "in": "query", "description": "A page's next.", "schema": { "type": "string" } }
                ],
                "responses": {
                  "200": { "description": "A page of transactions.", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/TransactionPage" } } } },
                  "400": { "$ref": "#/components/responses/Error" },
                  "401": { "$ref": "#/components/responses/Error" },
                  "503": { "$ref": "#/components/responses/Error" }
                }
              }
            },
            "/api/transactions/{id}": {
              "get": {
                "operationId": "getTransaction",
                "summary": "One transaction as status --json prints it.",
                "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }],
                "responses": {
                  "200": { "description": "The transaction.", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Transaction" } } } },
                  "401": { "$ref": "#/components/responses/Error" },
                  "404": { "$ref": "#/components/responses/Error" },
                  "503": { "$ref": "#/components/responses/Error" }
                }
              }
            },
            "/api/overview": {
              "get": {
                "operationId": "getOverview",
                "summary": "Transactions by status, documents per minute over the last ten minutes and in each of the last hour's minutes, open reviews.",
                "responses": {
                  "200": { "description": "The counts.", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Overview" } } } },
                  "401": { "$ref": "#/components/responses/Error" },
                  "503": { "$ref": "#/components/responses/Error" }
                }
              }
            },
            "/api/review": {
              "get": {
                "operationId": "listReviews",
                "summary": "The review queue, soonest expiry first.",
                "parameters": [
                  { "name": "state", "in": "query", "description": "all, or one state (open by default).", "schema": { "type": "string", "enum": \(list(["all"] + ReviewState.allCases.map(\.rawValue))) } },
                  { "name": "code", "in": "query", "schema": { "type": "string", "maxLength": 128 } },
                  { "name": "offset", "in": "query", "schema": { "type": "integer", "minimum": 0, "maximum": \(View.maximumOffset), "default": 0 } },
                  { "name": "limit", "in": "query", "schema": { "type": "integer", "minimum": 1, "maximum": 500, "default": 100 } }
                ],
                "responses": {
                  "200": { "description": "A page of reviews.", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ReviewPage" } } } },
                  "400": { "$ref": "#/components/responses/Error" },
                  "401": { "$ref": "#/components/responses/Error" },
                  "503": { "$ref": "#/components/responses/Error" }
                }
              }
            },
            "/api/openapi.json": {
              "get": {
                "operationId": "getOpenAPI",
                "summary": "This description.",
                "responses": {
                  "200": { "description": "OpenAPI 3.1.", "content": { "application/json": { "schema": { "type": "object" } } } },
                  "401": { "$ref": "#/components/responses/Error" }
                }
              }
            }
          },
          "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "responses": {
              "Error": { "description": "An error: its status and a sentence.", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } }
            },
            "schemas": {
              "Error": {
                "type": "object", "additionalProperties": false, "required": ["error"],
                "properties": {
                  "error": {
                    "type": "object", "additionalProperties": false, "required": ["status", "message"],
                    "properties": { "status": { "type": "integer", "minimum": 400, "maximum": 599 }, "message": { "type": "string" } }
                  }
                }
              },
              "Time": { "type": "string", "format": "date-time", "pattern": "^\\\\d{4}-\\\\d{2}-\\\\d{2}T\\\\d{2}:\\\\d{2}:\\\\d{2}\\\\.\\\\d{3}Z$" },
              "DocumentSubmissionStatus": { "type": "string", "enum": \(list(DocumentSubmissionStatus.allCases.map(\.rawValue))) },
              "DocumentStatus": { "type": "string", "enum": \(list(DocumentStatus.allCases.map(\.rawValue))) },
              "DocumentType": { "type": "string", "enum": \(list(DocumentType.allCases.map(\.rawValue))) },
              "Data": { "type": "string", "enum": \(list(DataState.allCases.map(\.rawValue))) },
              "DocumentRequirement": { "type": "string", "enum": \(list(DocumentRequirement.allCases.map(\.rawValue))) },
              "PolicyByType": {
                "type": "object", "propertyNames": { "$ref": "#/components/schemas/DocumentType" },
                "additionalProperties": { "$ref": "#/components/schemas/DocumentRequirement" }
              },
              "StatusByType": {
                "type": "object", "propertyNames": { "$ref": "#/components/schemas/DocumentType" },
                "additionalProperties": { "$ref": "#/components/schemas/DocumentStatus" }
              },
              "TransactionSummary": {
                "type": "object", "additionalProperties": false,
                "required": ["transactionId", "documentSubmissionStatus", "documentStatus", "updatedAt", "expiresAt", "data"],
                "properties": {
                  "transactionId": { "type": "string" },
                  "documentSubmissionStatus": { "$ref": "#/components/schemas/DocumentSubmissionStatus" },
                  "documentStatus": { "$ref": "#/components/schemas/StatusByType" },
                  "updatedAt": { "$ref": "#/components/schemas/Time" },
                  "expiresAt": { "$ref": "#/components/schemas/Time" },
                  "data": { "$ref": "#/components/schemas/Data" }
                }
              },
              "TransactionPage": {
                "type": "object", "additionalProperties": false, "required": ["next", "transactions"],
                "properties": {
                  "next": { "type": ["string", "null"], "description": "The after of the next page; null on the last." },
                  "transactions": { "type": "array", "items": { "$ref": "#/components/schemas/TransactionSummary" } }
                }
              },
              "Failure": {
                "type": "object", "additionalProperties": false, "required": ["code", "message"],
                "properties": { "code": { "type": "string" }, "message": { "type": "string" }, "field": { "type": "string" } }
              },
              "DocumentReview": {
                "type": "object", "additionalProperties": false, "required": ["id", "state", "kind", "attempt", "failedAt", "inputs"],
                "properties": {
                  "id": { "type": "integer" }, "state": { "$ref": "#/components/schemas/ReviewState" },
                  "kind": { "$ref": "#/components/schemas/ReviewKind" }, "attempt": { "type": "integer", "minimum": 1 },
                  "failedAt": { "$ref": "#/components/schemas/Time" }, "inputs": { "$ref": "#/components/schemas/ReviewInputs" },
                  "resolvedAt": { "$ref": "#/components/schemas/Time" }, "resolution": { "type": "string" }, "resolvedBy": { "type": "string" }
                }
              },
              "Document": {
                "type": "object", "additionalProperties": false, "required": ["documentType", "source", "keys"],
                "properties": {
                  "id": { "type": "string" },
                  "documentType": { "$ref": "#/components/schemas/DocumentType" },
                  "source": { "type": "string" },
                  "keys": { "type": "array", "items": { "type": "string", "enum": \(list(DocumentKey.allCases.map(\.rawValue))) } },
                  "submission": {
                    "type": "object", "additionalProperties": false, "required": ["outcome", "attempts", "updatedAt"],
                    "properties": {
                      "outcome": { "type": "string" }, "attempts": { "type": "integer", "minimum": 0 }, "error": { "type": "string" },
                      "updatedAt": { "$ref": "#/components/schemas/Time" }
                    }
                  },
                  "error": { "$ref": "#/components/schemas/Failure" },
                  "review": { "$ref": "#/components/schemas/DocumentReview" }
                }
              },
              "Step": {
                "type": "object", "additionalProperties": false, "required": ["sequence", "from", "to", "at", "reason"],
                "properties": {
                  "sequence": { "type": "integer" }, "documentType": { "$ref": "#/components/schemas/DocumentType" },
                  "from": { "type": "string" }, "to": { "type": "string" }, "at": { "$ref": "#/components/schemas/Time" },
                  "reason": { "type": "string" }
                }
              },
              "Transaction": {
                "type": "object", "additionalProperties": false,
                "required": ["transactionId", "documentSubmissionStatus", "documentStatus", "policy", "createdAt", "updatedAt", "expiresAt", "data", "documents", "history"],
                "properties": {
                  "transactionId": { "type": "string" },
                  "envId": { "type": "string" },
                  "documentSubmissionStatus": { "$ref": "#/components/schemas/DocumentSubmissionStatus" },
                  "documentStatus": { "$ref": "#/components/schemas/StatusByType" },
                  "policy": { "$ref": "#/components/schemas/PolicyByType" },
                  "createdAt": { "$ref": "#/components/schemas/Time" },
                  "updatedAt": { "$ref": "#/components/schemas/Time" },
                  "expiresAt": { "$ref": "#/components/schemas/Time" },
                  "data": { "$ref": "#/components/schemas/Data" },
                  "purgedAt": { "$ref": "#/components/schemas/Time" },
                  "documents": { "type": "array", "items": { "$ref": "#/components/schemas/Document" } },
                  "history": { "type": "array", "items": { "$ref": "#/components/schemas/Step" } }
                }
              },
              "Overview": {
                "type": "object", "additionalProperties": false, "required": ["collectedPerMinute", "documentsPerMinute", "reviewsOpen", "transactions"],
                "properties": {
                  "collectedPerMinute": {
                    "description": "Documents collected in each of the last \(View.chartMinutes) minutes, oldest first.",
                    "type": "array", "items": { "type": "integer", "minimum": 0 }, "minItems": \(View.chartMinutes), "maxItems": \(View.chartMinutes)
                  },
                  "documentsPerMinute": { "type": "number", "minimum": 0 },
                  "reviewsOpen": { "type": "integer", "minimum": 0 },
                  "transactions": {
                    "type": "object", "additionalProperties": false, "required": \(list(DocumentSubmissionStatus.allCases.map(\.rawValue))),
                    "properties": {\(DocumentSubmissionStatus.allCases.map { "\"\($0.rawValue)\": { \"type\": \"integer\", \"minimum\": 0 }" }.joined(separator: ", "))}
                  }
                }
              },
              "ReviewState": { "type": "string", "enum": \(list(ReviewState.allCases.map(\.rawValue))) },
              "ReviewKind": { "type": "string", "enum": \(list(ReviewKind.allCases.map(\.rawValue))) },
              "ReviewInputs": { "type": "string", "enum": \(list(ReviewInputs.allCases.map(\.rawValue))) },
              "Review": {
                "type": "object", "additionalProperties": false,
                "required": ["id", "kind", "code", "message", "source", "attempt", "failedAt", "state", "inputs"],
                "properties": {
                  "id": { "type": "integer" }, "transactionId": { "type": "string" },
                  "documentType": { "$ref": "#/components/schemas/DocumentType" }, "kind": { "$ref": "#/components/schemas/ReviewKind" },
                  "code": { "type": "string" }, "message": { "type": "string" }, "field": { "type": "string" }, "source": { "type": "string" },
                  "attempt": { "type": "integer", "minimum": 1 }, "failedAt": { "$ref": "#/components/schemas/Time" },
                  "state": { "$ref": "#/components/schemas/ReviewState" }, "inputs": { "$ref": "#/components/schemas/ReviewInputs" },
                  "expiresAt": { "$ref": "#/components/schemas/Time" }, "resolvedAt": { "$ref": "#/components/schemas/Time" },
                  "resolution": { "type": "string" }, "resolvedBy": { "type": "string" }
                }
              },
              "ReviewPage": {
                "type": "object", "additionalProperties": false, "required": ["next", "reviews"],
                "properties": {
                  "next": { "type": ["integer", "null"], "description": "The offset of the next page; null on the last." },
                  "reviews": { "type": "array", "items": { "$ref": "#/components/schemas/Review" } }
                }
              }
            }
          }
        }

        """
    }

    static func list(_ values: [String]) -> String {
        "[" + values.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
    }
}
