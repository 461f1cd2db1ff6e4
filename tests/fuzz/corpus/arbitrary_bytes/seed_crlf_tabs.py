def f():
	return {
		"st\x61tus": "ok",
		"con" "tent": blocks,  # c
		r"extra": {"status": "e", "content": [], "n": 2},
	}
