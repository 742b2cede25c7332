"""The counterfactual sex rewrite of clinical notes: which words name the patient, the referee
that weighs a pronoun's referent, the edits and their certainty, the referee's training and the
rewrite's speed measurement. A library: it imports no benchmark; CLIMB extrinsic calls it
through :func:`climb_vllm.rewrite.sex_rewrite.swap_sex` and :func:`rewrite_sha256`."""
