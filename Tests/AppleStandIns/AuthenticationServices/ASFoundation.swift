// Stand-in (Linux only, never shipped): the presentation anchor AuthenticationServices presents
// its sheets over. Apple's is a typealias of UIKit's UIWindow (iOS, tvOS, visionOS) or AppKit's
// NSWindow (macOS), both main-actor classes; the glue never names either, only the alias.

public import Foundation

// mirrors: UIKit/UIWindow.h, AppKit/NSWindow.h | uikit/uiwindow | the main-actor window class the alias names; UIKit and AppKit do not exist on Linux
@MainActor
open class StandInWindow: NSObject {}

// mirrors: AuthenticationServices/ASFoundation.h | authenticationservices/aspresentationanchor
public typealias ASPresentationAnchor = StandInWindow
