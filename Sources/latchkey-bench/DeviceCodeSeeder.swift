import Foundation
import LatchkeyServer

/// `latchkey-bench seed-device CONFIG COUNT`: pending device authorizations (RFC 8628) for
/// polling load, issued as `/oauth/device_authorization` issues them, so `scripts/bench` can
/// measure `/oauth/token` polls while the user has not answered.
///
/// Registers a first-party public client of the device grant ("Bench TV") and writes COUNT device
/// codes of it to standard output, `client_id device_code` per line. Set `device.code_ttl` long
/// enough for the run.
enum DeviceCodeSeeder {
    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else {
            FileHandle.standardError.write(Data("usage: latchkey-bench seed-device CONFIG COUNT\n".utf8))
            return 2
        }
        return await Seeding.run("seed-device", configurationFile: arguments[0]) { application in
            let (client, _) = try await application.clients.register(
                ClientRegistration(name: "Bench TV", redirectURIs: [], firstParty: true, grantTypes: [.deviceCode, .refreshToken]))
            let devices = application.services.devices
            let context = RequestContext(ip: "127.0.0.1")
            return try await withThrowingTaskGroup(of: String.self) { group in
                // A few at a time: each authorization is its own write, as at the endpoint.
                for worker in 0..<8 {
                    group.addTask {
                        var lines = ""
                        for _ in stride(from: worker, to: count, by: 8) {
                            let grant = try await devices.issue(client: client, scope: "openid", context: context)
                            lines += client.id + " " + grant.deviceCode + "\n"
                        }
                        return lines
                    }
                }
                return try await group.reduce(into: "") { $0 += $1 }
            }
        }
    }
}
