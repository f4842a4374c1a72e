import LatchkeyHTTP
import LatchkeyHTTPServer
import Testing

@Suite("Trusted proxies")
struct TrustedProxiesTests {
    let proxies = TrustedProxies(networks: ["127.0.0.1", "10.0.0.0/8", "fd00::/8"].compactMap(IPNetwork.init))

    @Test("networks parse from addresses and prefixes; anything else is refused")
    func parsing() {
        for valid in ["127.0.0.1", "10.0.0.0/8", "0.0.0.0/0", "::1", "fd00::/8", "2001:db8::/32", "192.0.2.7/32"] {
            #expect(IPNetwork(valid) != nil, "\(valid)")
        }
        for invalid in ["", "localhost", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/x", "::1/129", "1.2.3", "10.0.0.0/8/8", " 10.0.0.1"] {
            #expect(IPNetwork(invalid) == nil, "\(invalid)")
        }
    }

    @Test("membership follows the prefix, and IPv4 matches its IPv6-mapped form")
    func membership() {
        #expect(proxies.contains("10.200.3.4"))
        #expect(!proxies.contains("11.0.0.1"))
        #expect(proxies.contains("::ffff:10.1.1.1"))
        #expect(proxies.contains("fd12:3456::1"))
        #expect(!proxies.contains("fe80::1"))
        #expect(!proxies.contains("not an address"))
        #expect(TrustedProxies(networks: [IPNetwork("0.0.0.0/0")!]).contains("203.0.113.1"))
    }

    @Test("the client is the rightmost forwarded address that is not a trusted proxy")
    func clientAddress() {
        // A proxy-appended chain: client 203.0.113.7, then two of our proxies.
        #expect(proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.1, 203.0.113.7, 10.1.2.3"]) == "203.0.113.7")
        // Several header lines are one list, in order.
        #expect(proxies.clientAddress(peer: "10.0.0.5", forwardedFor: ["203.0.113.7", "10.9.9.9"]) == "203.0.113.7")
        // An untrusted peer keeps its own address whatever it forwards.
        #expect(proxies.clientAddress(peer: "198.51.100.9", forwardedFor: ["203.0.113.7"]) == "198.51.100.9")
        // A trusted peer without the header is the client.
        #expect(proxies.clientAddress(peer: "127.0.0.1", forwardedFor: []) == "127.0.0.1")
        // Garbage where an address belongs stops the walk at the last trusted hop.
        #expect(proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["203.0.113.7, junk"]) == "127.0.0.1")
        #expect(proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["junk, 10.1.1.1"]) == "10.1.1.1")
        // Only proxies all the way: the leftmost of them.
        #expect(proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["10.0.0.1, 10.0.0.2"]) == "10.0.0.1")
        // IPv6 clients come out in canonical form, mapped IPv4 as IPv4.
        #expect(proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["2001:DB8:0:0::1"]) == "2001:db8::1")
        #expect(proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["::ffff:203.0.113.7"]) == "203.0.113.7")
        #expect(TrustedProxies.none.clientAddress(peer: "127.0.0.1", forwardedFor: ["203.0.113.7"]) == "127.0.0.1")
    }
}
