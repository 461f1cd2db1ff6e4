x = ({"status": 1, "content": [{"json": {"a": 1}}], "b": 2,
     # own line
     "c": 3})
