import LatchkeyClient
print("probe")
