r = {"status": "error", "content": [*blocks, {"text": f"{x}"}], "toolUseId": t, b"raw": 1, f"k": 2, "z": 3}
