import Foundation

/// How long ago, in the largest whole unit: `42s`, `5m`, `3h`, `2d` (the review queue's ages).
package enum Age {
    package static func text(_ seconds: TimeInterval) -> String {
        switch seconds {
        case ..<60: "\(Int(max(0, seconds)))s"
        case ..<3600: "\(Int(seconds / 60))m"
        case ..<86_400: "\(Int(seconds / 3600))h"
        default: "\(Int(seconds / 86_400))d"
        }
    }
}
