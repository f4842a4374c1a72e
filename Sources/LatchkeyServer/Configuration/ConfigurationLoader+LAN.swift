import FoundationEssentials

extension ConfigurationLoader {
    /// `serve --dev --lan`: development mode on every interface, so a Simulator or a phone on
    /// the local network can reach it, with the public URL on this machine's LAN address.
    ///
    /// Only for development mode; a loopback `listen` becomes `0.0.0.0` on the same port, and the
    /// port must be fixed, because the public URL names it before the port is bound.
    ///
    /// - Returns: The problems, in the loader's one-line form.
    static func openToLAN(_ configuration: inout Configuration, addresses: () -> [String]) -> [String] {
        guard configuration.dev else {
            return ["--lan: only for development mode (--dev); outside it, listen names the address to bind"]
        }
        // A listen address that does not parse is reported by validate().
        guard let listen = Configuration.parseListen(configuration.listen) else { return [] }
        guard listen.port != 0 else {
            return ["--lan: needs a fixed port (for example --listen 0.0.0.0:8080), so the public URL can name it"]
        }
        configuration.lan = true
        let wildcard = ["0.0.0.0", "::"].contains(listen.host)
        if Configuration.isLoopback(listen.host) { configuration.listen = "0.0.0.0:\(listen.port)" }
        guard configuration.publicURL == nil else { return [] }
        guard let host = wildcard || Configuration.isLoopback(listen.host) ? addresses().first : listen.host else {
            return ["--lan: this machine has no LAN address; give --public-url http://ADDRESS:\(listen.port)"]
        }
        configuration.publicURL = "http://\(host.contains(":") ? "[\(host)]" : host):\(listen.port)"
        return []
    }
}
