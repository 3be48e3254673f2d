print("tiltd")
