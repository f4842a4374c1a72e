// LatchkeyServer: its first types arrive with issue 3.
