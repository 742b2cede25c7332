"""Free-text diagnoses to ICD-10-CM codes: points, codes written out, exact and spelled names,
abbreviation senses, qualifiers, the title index and its vectors, refusals, and the mapping
accuracy and speed benchmarks. A library: it imports no benchmark; CLIMB extrinsic calls it
through :class:`climb_vllm.icd_mapping.icdmap.Mapper`."""
