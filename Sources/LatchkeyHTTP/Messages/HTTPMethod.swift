/// An HTTP request method (RFC 9110 §9).
///
/// A struct rather than an enum so that a method this server has no route for (say `PROPFIND`)
/// still reaches the router, which answers 405 or 404 instead of the parser guessing.
package struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token as it appears on the request line, case-sensitive (RFC 9110 §9.1).
    package let rawValue: String

    /// Creates a method from its token.
    package init(rawValue: String) { self.rawValue = rawValue }

    package var description: String { rawValue }

    /// `GET`.
    package static let get = HTTPMethod(rawValue: "GET")
    /// `POST`.
    package static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    package static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH` (RFC 5789).
    package static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`.
    package static let delete = HTTPMethod(rawValue: "DELETE")
    /// `HEAD`: a `GET` without the body.
    package static let head = HTTPMethod(rawValue: "HEAD")
    /// `OPTIONS`.
    package static let options = HTTPMethod(rawValue: "OPTIONS")

    /// The method for request-line bytes, reusing the static values for the common ones so that
    /// parsing a request allocates no string for its method.
    package init(bytes: UnsafeRawBufferPointer) {
        switch bytes.count {
        case 3 where bytes.elementsEqual("GET".utf8): self = .get
        case 3 where bytes.elementsEqual("PUT".utf8): self = .put
        case 4 where bytes.elementsEqual("POST".utf8): self = .post
        case 4 where bytes.elementsEqual("HEAD".utf8): self = .head
        case 5 where bytes.elementsEqual("PATCH".utf8): self = .patch
        case 6 where bytes.elementsEqual("DELETE".utf8): self = .delete
        case 7 where bytes.elementsEqual("OPTIONS".utf8): self = .options
        default: self.init(rawValue: String(decoding: bytes, as: UTF8.self))
        }
    }
}
