// Stand-in (Linux only, never shipped): the CoreFoundation types Security's API is written in.
// On Apple platforms they come from CoreFoundation, which Security re-exports; the glue therefore
// imports only Security. CF types are toll-free bridged to Foundation's classes there, so
// `query as CFDictionary`, `kSecClass as String` and `data as CFData` are plain coercions; here the
// bridged Foundation class stands in for each CF type so that the same coercions type-check.

public import Foundation

// mirrors: CoreFoundation/CFBase.h | corefoundation/cftyperef | an alias of AnyObject, as in Apple's overlay
public typealias CFTypeRef = AnyObject

// mirrors: CoreFoundation/CFBase.h | corefoundation/cftypeid
public typealias CFTypeID = UInt

// mirrors: CoreFoundation/CFBase.h | corefoundation/cfoptionflags
public typealias CFOptionFlags = UInt

// mirrors: CoreFoundation/CFBase.h | corefoundation/cfstring | NSString stands in for the toll-free bridged CF class
public typealias CFString = NSString

// mirrors: CoreFoundation/CFDictionary.h | corefoundation/cfdictionary | NSDictionary stands in for the toll-free bridged CF class
public typealias CFDictionary = NSDictionary

// mirrors: CoreFoundation/CFData.h | corefoundation/cfdata | NSData stands in for the toll-free bridged CF class
public typealias CFData = NSData

// mirrors: CoreFoundation/CFError.h | corefoundation/cferror | NSError stands in for the toll-free bridged CF class
public typealias CFError = NSError

// mirrors: CoreFoundation/CFBase.h | corefoundation/cfallocator
public final class CFAllocator {
    private init() { fatalError("stand-in") }
}

// mirrors: CoreFoundation/CFBase.h | corefoundation/cfgettypeid(_:)
public func CFGetTypeID(_ cf: CFTypeRef?) -> CFTypeID { fatalError("stand-in") }
