"""Procedural street scenes (the UrbanSim-style baseline the paper compares against, and round-trip
ground truth): layouts of roads, raised sidewalks with curb ramps and crosswalks, buildings and street
furniture placed by urban rules, with assets drawn from the procedural catalogue."""
