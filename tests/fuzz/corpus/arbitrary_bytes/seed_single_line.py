return {"status": "success", "content": [{"text": s}], "frames": 1, **stats}
