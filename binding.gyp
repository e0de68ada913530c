{
  "targets": [
    {
      "target_name": "alignment_json",
      "sources": ["src/areas/reads/native/alignment-json.c"],
      "cflags": ["-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
