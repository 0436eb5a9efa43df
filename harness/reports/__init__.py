"""What people and CI read: the gate, explanations of a trace, the reviewer's map, benchmarks."""
