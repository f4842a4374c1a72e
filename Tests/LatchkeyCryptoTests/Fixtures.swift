import LatchkeyTestSupport

/// This target's `Fixtures/` folder.
let fixtures = Fixtures(bundle: .module)
