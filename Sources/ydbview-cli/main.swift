print("ydbview")
