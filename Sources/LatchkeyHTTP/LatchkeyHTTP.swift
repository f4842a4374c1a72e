internal import CLatchkeyEvent

enum LibeventProbe { static var version: String { String(cString: event_get_version()) } }
