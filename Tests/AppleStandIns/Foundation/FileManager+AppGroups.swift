// Stand-in (Linux only, never shipped): the one Foundation API of Apple platforms that the
// docs/ios.md snippets use and Linux's Foundation lacks. It is not a module of its own (Foundation
// exists on Linux): scripts/typecheck-apple-glue compiles this file into the snippets' module.

public import Foundation

extension FileManager {
    // mirrors: Foundation/NSFileManager.h | foundation/filemanager/containerurl(forsecurityapplicationgroupidentifier:)
    @available(iOS 7.0, macOS 10.8, tvOS 9.0, watchOS 2.0, *)
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? {
        fatalError("stand-in")
    }
}
