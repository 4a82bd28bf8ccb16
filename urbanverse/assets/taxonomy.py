"""A 3-level urban object ontology (L1 / L2 / L3) linked to WordNet synsets and detector label sets.

Each L3 class carries a one-line definition, a typical size range, default materials (keys of the
material table) and the COCO and ImageNet-1k class names that detect it. Sizes are extents in the
asset frame, in metres: (length along +X = the front direction, width along Y, height along Z).
So a bench, whose front is where one sits, is short in x and long in y; a car is long in x.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

#: The 80 COCO detection class names.
COCO_CLASSES = tuple(
    "person,bicycle,car,motorcycle,airplane,bus,train,truck,boat,traffic light,fire hydrant,stop sign,"
    "parking meter,bench,bird,cat,dog,horse,sheep,cow,elephant,bear,zebra,giraffe,backpack,umbrella,"
    "handbag,tie,suitcase,frisbee,skis,snowboard,sports ball,kite,baseball bat,baseball glove,skateboard,"
    "surfboard,tennis racket,bottle,wine glass,cup,fork,knife,spoon,bowl,banana,apple,sandwich,orange,"
    "broccoli,carrot,hot dog,pizza,donut,cake,chair,couch,potted plant,bed,dining table,toilet,tv,laptop,"
    "mouse,remote,keyboard,cell phone,microwave,oven,toaster,sink,refrigerator,book,clock,vase,scissors,"
    "teddy bear,hair drier,toothbrush".split(",")
)

#: Material names used by the taxonomy and the generators (keys of the material table).
MATERIALS = (
    "steel stainless_steel cast_iron aluminium painted_metal wood hardwood plastic hdpe rubber glass "
    "concrete stone granite brick asphalt ceramic fabric foliage bark soil water fibreglass carbon_fibre "
    "leather foam cardboard paper marble bronze"
).split()


@dataclass(frozen=True)
class TaxonomyClass:
    """One L3 class. Sizes: (length x, width y, height z) in metres, asset frame, front along +X."""

    l1: str
    l2: str
    l3: str
    synset: str
    definition: str
    size_min: tuple[float, float, float]
    size_max: tuple[float, float, float]
    materials: tuple[str, ...]
    coco: tuple[str, ...]
    imagenet: tuple[str, ...]


# (l3, synset, definition, size_min, size_max, "materials", "coco labels", "imagenet labels");
# label lists are comma-separated.
_E = tuple
# fmt: off
_TREE: dict[str, dict[str, list[_E]]] = {
    "street_furniture": {
        "seating": [
            ("bench", "bench.n.01", "a long outdoor seat for several people, often with a backrest",
             (0.35, 0.9, 0.35), (1.0, 3.2, 1.2), "wood steel cast_iron", "bench", "park bench"),
            ("backless_bench", "bench.n.01", "a backless seat or seating block for several people",
             (0.3, 0.9, 0.3), (1.0, 3.2, 0.6), "concrete wood granite steel", "bench", "park bench"),
            ("picnic_table", "picnic_table.n.01", "a table with attached benches on both long sides",
             (1.2, 1.4, 0.65), (2.0, 2.6, 0.9), "wood steel", "dining table,bench", ""),
            ("outdoor_chair", "chair.n.01", "a single seat with a back for outdoor use",
             (0.4, 0.4, 0.7), (0.75, 0.7, 1.1), "aluminium plastic wood", "chair", "folding chair"),
            ("outdoor_stool", "stool.n.01", "a backless single seat",
             (0.3, 0.3, 0.4), (0.6, 0.6, 0.8), "concrete wood steel", "chair", ""),
            ("lounger", "chaise_longue.n.01", "a reclining outdoor chair for lying on",
             (1.6, 0.55, 0.3), (2.1, 0.8, 1.0), "wood fabric aluminium", "chair,bench", ""),
        ],
        "tables_and_shade": [
            ("cafe_table", "table.n.02", "a small table for outdoor dining",
             (0.5, 0.5, 0.68), (1.6, 1.0, 0.8), "aluminium steel wood", "dining table", "dining table"),
            ("patio_umbrella", "parasol.n.01", "a large umbrella on a weighted base shading a seating area",
             (1.8, 1.8, 2.0), (4.0, 4.0, 3.0), "fabric aluminium concrete", "umbrella", "umbrella"),
            ("patio_heater", "heater.n.01", "a tall gas or electric heater for outdoor seating",
             (0.4, 0.4, 1.8), (0.9, 0.9, 2.5), "stainless_steel steel", "", "space heater"),
        ],
        "waste_containers": [
            ("trash_bin", "ashcan.n.01", "a public litter bin",
             (0.35, 0.35, 0.6), (0.9, 0.9, 1.3), "steel painted_metal hdpe cast_iron", "", "ashcan"),
            ("recycling_bin", "bin.n.01", "a multi-compartment bin for sorted waste",
             (0.35, 0.7, 0.8), (0.8, 1.8, 1.3), "hdpe painted_metal", "", "ashcan"),
            ("wheelie_bin", "wheelie_bin.n.01", "a wheeled plastic refuse container with a hinged lid",
             (0.55, 0.48, 0.9), (1.3, 1.5, 1.4), "hdpe rubber", "", "ashcan"),
            ("dumpster", "dumpster.n.01", "a large steel skip for commercial waste",
             (1.0, 1.4, 1.0), (2.2, 3.0, 1.8), "painted_metal steel", "", "ashcan"),
            ("dog_waste_bin", "bin.n.01", "a small post-mounted bin for dog waste bags",
             (0.25, 0.25, 0.8), (0.5, 0.5, 1.3), "painted_metal hdpe", "", "ashcan"),
            ("ashtray_bin", "ashtray.n.01", "a standing ashtray receptacle",
             (0.2, 0.2, 0.7), (0.45, 0.45, 1.1), "stainless_steel steel", "", "ashcan"),
        ],
        "planters": [
            ("planter", "planter.n.02", "a large outdoor container planted with shrubs or flowers",
             (0.4, 0.4, 0.4), (2.5, 2.5, 2.2), "concrete wood steel ceramic soil foliage",
             "potted plant", "pot"),
            ("raised_bed", "bed.n.08", "a low walled planting bed",
             (0.8, 1.0, 0.2), (3.0, 4.0, 0.8), "wood concrete stone soil", "", ""),
            ("planter_pot", "pot.n.04", "a large freestanding flower pot",
             (0.3, 0.3, 0.3), (1.2, 1.2, 1.2), "ceramic concrete fibreglass",
             "vase,potted plant", "pot,vase"),
        ],
        "shelters": [
            ("bus_shelter", "bus_shelter.n.01", "a roofed shelter with glazed walls at a bus stop",
             (1.2, 2.5, 2.3), (2.2, 8.0, 3.2), "glass steel aluminium", "", ""),
            ("pergola", "pergola.n.01", "an open framework of posts and beams over a walkway or seating",
             (2.0, 2.0, 2.2), (5.0, 8.0, 3.5), "wood steel", "", "patio"),
            ("gazebo", "gazebo.n.01", "a small roofed open pavilion",
             (2.5, 2.5, 2.5), (6.0, 6.0, 5.0), "wood steel", "", ""),
            ("canopy_tent", "tent.n.01", "a square pop-up market canopy",
             (2.5, 2.5, 2.3), (6.0, 6.0, 3.5), "fabric aluminium", "", "mountain tent"),
        ],
        "kiosks_and_stalls": [
            ("kiosk", "kiosk.n.01", "a small booth selling newspapers, snacks or tickets",
             (1.5, 1.5, 2.4), (4.0, 5.0, 3.8), "painted_metal glass wood", "", "tobacco shop"),
            ("market_stall", "stall.n.03", "a covered table from which goods are sold",
             (1.2, 1.8, 2.0), (3.0, 4.0, 3.0), "wood fabric steel", "", ""),
            ("food_cart", "pushcart.n.01", "a wheeled cart selling food",
             (1.0, 1.8, 1.5), (2.0, 3.2, 2.8), "stainless_steel painted_metal fabric", "", "horse cart"),
            ("newspaper_box", "newspaper_box.n.01", "a coin-operated box dispensing newspapers",
             (0.35, 0.4, 0.9), (0.65, 0.65, 1.4), "painted_metal plastic", "", "mailbox"),
            ("vending_machine", "vending_machine.n.01", "a machine selling drinks or snacks",
             (0.6, 0.7, 1.6), (1.0, 1.4, 2.1), "painted_metal glass plastic",
             "refrigerator", "vending machine"),
            ("atm", "cash_machine.n.01", "a freestanding automated teller machine",
             (0.6, 0.6, 1.4), (1.2, 1.2, 2.2), "steel plastic glass", "", "cash machine"),
        ],
        "bicycle_parking": [
            ("bike_rack", "bicycle_rack.n.01", "a row of hoops or a frame for locking bicycles",
             (0.4, 0.6, 0.3), (1.2, 6.0, 1.1), "steel stainless_steel painted_metal", "", ""),
            ("bike_locker", "locker.n.01", "an enclosed lockable box for one or two bicycles",
             (1.8, 0.8, 1.2), (2.2, 2.0, 1.6), "painted_metal hdpe", "", ""),
            ("bike_share_dock", "stand.n.04", "a docking station of a public bike-share scheme",
             (0.6, 2.0, 0.9), (1.2, 12.0, 2.5), "steel plastic", "bicycle", ""),
        ],
        "public_art_and_water": [
            ("fountain", "fountain.n.01", "an ornamental basin with a water jet or tiered bowls",
             (1.5, 1.5, 0.6), (8.0, 8.0, 4.0), "stone concrete granite water bronze", "", "fountain"),
            ("drinking_fountain", "drinking_fountain.n.01", "a post-mounted public drinking-water tap",
             (0.3, 0.3, 0.8), (0.9, 0.9, 1.3), "stainless_steel cast_iron concrete", "", ""),
            ("statue", "statue.n.01", "a sculpted figure on a plinth",
             (0.6, 0.6, 1.5), (4.0, 4.0, 7.0), "bronze stone marble granite", "", "pedestal"),
            ("sculpture", "sculpture.n.01", "an abstract public artwork",
             (0.5, 0.5, 0.8), (6.0, 6.0, 8.0), "steel bronze stone concrete", "", ""),
            ("obelisk", "obelisk.n.01", "a tall tapering four-sided stone pillar",
             (0.6, 0.6, 2.5), (3.0, 3.0, 15.0), "granite stone marble", "", "obelisk"),
            ("memorial_stone", "memorial.n.03", "an inscribed commemorative block",
             (0.3, 0.5, 0.5), (1.5, 3.0, 2.5), "granite stone bronze", "", "megalith,brass"),
        ],
    },
    "lighting": {
        "street_lights": [
            ("street_lamp", "streetlight.n.01", "a tall pole with a lamp head over the road",
             (0.4, 0.4, 4.0), (3.5, 1.0, 12.0), "steel aluminium glass", "", "pole"),
            ("heritage_lamp_post", "lamppost.n.01", "an ornamental cast-iron lamp post with a lantern",
             (0.35, 0.35, 2.8), (1.5, 1.5, 6.0), "cast_iron glass painted_metal", "", "pole"),
            ("double_arm_street_lamp", "streetlight.n.01", "a lamp pole with two opposed arms",
             (0.4, 1.5, 5.0), (1.2, 6.0, 12.0), "steel aluminium glass", "", "pole"),
            ("solar_street_lamp", "streetlight.n.01", "a street lamp with its own solar panel",
             (0.4, 0.4, 4.0), (2.0, 2.0, 10.0), "steel aluminium glass", "", "pole,solar dish"),
            ("high_mast_light", "floodlight.n.01", "a very tall mast with a ring of floodlights",
             (1.0, 1.0, 15.0), (4.0, 4.0, 40.0), "steel", "", "pole"),
        ],
        "pedestrian_lights": [
            ("bollard_light", "light.n.02", "a waist-high bollard with a light at the top",
             (0.12, 0.12, 0.5), (0.4, 0.4, 1.3), "aluminium stainless_steel glass", "", ""),
            ("path_light", "light.n.02", "a low post light along a footpath",
             (0.15, 0.15, 0.8), (0.5, 0.5, 3.5), "aluminium steel glass", "", "pole"),
        ],
        "area_lights": [
            ("floodlight_post", "floodlight.n.01", "a post carrying one or more floodlights",
             (0.4, 0.4, 3.0), (2.0, 2.0, 12.0), "steel aluminium glass", "", "spotlight,pole"),
            ("light_column", "column.n.07", "an illuminated decorative column",
             (0.25, 0.25, 1.5), (1.0, 1.0, 5.0), "glass steel", "", ""),
        ],
    },
    "signage_and_signals": {
        "traffic_signals": [
            ("traffic_light", "traffic_light.n.01", "a signal head with red, amber and green lamps on a pole",
             (0.3, 0.3, 2.4), (1.6, 1.0, 6.5), "painted_metal aluminium steel glass",
             "traffic light", "traffic light"),
            ("pedestrian_signal", "traffic_light.n.01", "a walk / don't-walk signal head on a post",
             (0.3, 0.3, 2.2), (1.0, 0.8, 4.0), "painted_metal aluminium glass",
             "traffic light", "traffic light"),
            ("railway_crossing_signal", "signal.n.01", "a crossbuck with flashing lights at a rail crossing",
             (0.4, 0.8, 2.8), (1.5, 2.0, 5.0), "steel aluminium", "traffic light", "street sign"),
            ("warning_beacon", "beacon.n.03", "a post with a flashing amber globe",
             (0.2, 0.2, 1.5), (0.6, 0.6, 3.5), "steel plastic", "", "beacon"),
        ],
        "regulatory_signs": [
            ("stop_sign", "stop_sign.n.01", "a red octagonal stop sign on a post",
             (0.3, 0.5, 1.9), (0.8, 1.3, 3.5), "aluminium steel", "stop sign", "street sign"),
            ("yield_sign", "sign.n.02", "a downward-pointing triangular give-way sign on a post",
             (0.3, 0.5, 1.9), (0.8, 1.3, 3.5), "aluminium steel", "", "street sign"),
            ("speed_limit_sign", "sign.n.02", "a round or rectangular speed-limit sign on a post",
             (0.3, 0.4, 1.9), (0.8, 1.3, 3.5), "aluminium steel", "", "street sign"),
            ("no_entry_sign", "sign.n.02", "a red disc with a white bar forbidding entry",
             (0.3, 0.4, 1.9), (0.8, 1.3, 3.5), "aluminium steel", "", "street sign"),
            ("no_parking_sign", "sign.n.02", "a sign forbidding parking or stopping",
             (0.3, 0.3, 1.9), (0.8, 1.3, 3.5), "aluminium steel", "", "street sign"),
        ],
        "warning_signs": [
            ("warning_sign", "sign.n.02", "a triangular or diamond hazard-warning sign on a post",
             (0.3, 0.5, 1.9), (0.8, 1.3, 3.5), "aluminium steel", "", "street sign"),
            ("pedestrian_crossing_sign", "sign.n.02", "a sign marking a pedestrian crossing",
             (0.3, 0.4, 1.9), (0.8, 1.3, 3.5), "aluminium steel", "", "street sign"),
            ("roadworks_sign", "sign.n.02", "a temporary roadworks sign on a folding stand",
             (0.5, 0.6, 0.8), (1.2, 1.3, 2.0), "aluminium steel plastic", "", "street sign"),
        ],
        "guide_signs": [
            ("street_name_sign", "street_sign.n.01", "a blade sign naming a street on a post",
             (0.3, 0.5, 2.0), (0.8, 1.5, 4.0), "aluminium steel", "", "street sign"),
            ("direction_sign", "signpost.n.01", "a post with pointing finger signs",
             (0.3, 0.6, 2.0), (1.5, 2.0, 4.0), "aluminium wood steel", "", "street sign"),
            ("bus_stop_sign", "sign.n.02", "a bus-stop flag and timetable on a pole",
             (0.3, 0.4, 2.2), (0.8, 1.0, 3.8), "aluminium steel", "", "street sign"),
            ("wayfinding_totem", "sign.n.02", "a freestanding map and direction monolith",
             (0.2, 0.5, 1.6), (0.8, 1.5, 3.2), "aluminium steel glass", "", "street sign"),
            ("parking_sign", "sign.n.02", "a blue P parking information sign on a post",
             (0.3, 0.4, 1.9), (0.8, 1.3, 3.5), "aluminium steel", "", "street sign"),
        ],
        "advertising": [
            ("billboard", "billboard.n.01", "a large advertising panel on legs",
             (0.4, 2.0, 2.5), (3.0, 14.0, 12.0), "steel paper painted_metal", "", "scoreboard"),
            ("advertising_column", "advertising_pillar.n.01", "a cylindrical poster pillar with a cap",
             (0.8, 0.8, 2.4), (2.0, 2.0, 4.0), "concrete paper painted_metal", "", ""),
            ("a_frame_sign", "sandwich_board.n.01", "a folding two-sided pavement sign",
             (0.35, 0.4, 0.7), (0.9, 0.8, 1.3), "wood aluminium plastic", "", ""),
            ("poster_display_case", "display_case.n.01", "a lit glass poster case on legs",
             (0.2, 1.0, 1.8), (0.8, 1.8, 3.0), "aluminium glass", "", ""),
        ],
        "public_information": [
            ("information_board", "notice_board.n.01", "a roofed map or notice board on posts",
             (0.2, 0.8, 1.6), (1.0, 3.0, 3.0), "wood steel glass", "", ""),
            ("street_clock", "clock.n.01", "a post clock with one or more faces",
             (0.3, 0.3, 2.5), (1.2, 1.2, 6.0), "cast_iron painted_metal glass",
             "clock", "analog clock,wall clock"),
            ("flagpole", "flagpole.n.01", "a tall pole flying a flag",
             (0.3, 0.3, 4.0), (2.5, 2.5, 15.0), "aluminium fabric", "", "flagpole"),
            ("digital_display", "display.n.06", "a freestanding screen kiosk",
             (0.2, 0.6, 1.6), (0.8, 1.6, 2.8), "aluminium glass", "tv", "monitor,television"),
        ],
    },
    "vegetation": {
        "broadleaf_trees": [
            ("broadleaf_tree", "tree.n.01", "a deciduous tree with a rounded crown",
             (2.0, 2.0, 3.5), (14.0, 14.0, 22.0), "bark foliage", "", ""),
            ("columnar_tree", "tree.n.01", "a narrow upright tree such as a fastigiate oak or poplar",
             (1.0, 1.0, 4.0), (5.0, 5.0, 25.0), "bark foliage", "", ""),
            ("weeping_tree", "weeping_tree.n.01", "a tree with drooping branches such as a willow",
             (3.0, 3.0, 4.0), (14.0, 14.0, 16.0), "bark foliage", "", ""),
            ("young_street_tree", "sapling.n.01", "a young planted tree tied to support stakes",
             (0.8, 0.8, 2.5), (3.5, 3.5, 6.5), "bark foliage wood", "potted plant", ""),
        ],
        "conifers": [
            ("conifer_tree", "conifer.n.01", "a cone-shaped evergreen such as a spruce or fir",
             (1.5, 1.5, 3.0), (10.0, 10.0, 30.0), "bark foliage", "", ""),
            ("umbrella_pine", "stone_pine.n.01", "a pine with a tall bare trunk and a flat umbrella crown",
             (3.0, 3.0, 5.0), (16.0, 16.0, 20.0), "bark foliage", "", ""),
        ],
        "palms": [
            ("palm_tree", "palm.n.03", "a palm with a tall unbranched trunk and a crown of fronds",
             (2.0, 2.0, 3.0), (10.0, 10.0, 25.0), "bark foliage", "", ""),
        ],
        "shrubs_and_hedges": [
            ("shrub", "shrub.n.01", "a low woody bush",
             (0.3, 0.3, 0.3), (4.0, 4.0, 3.0), "foliage bark", "", ""),
            ("hedge", "hedge.n.01", "a row of clipped shrubs forming a boundary",
             (0.4, 1.0, 0.4), (2.0, 12.0, 3.0), "foliage", "", ""),
            ("topiary", "topiary.n.01", "a shrub clipped into a geometric shape",
             (0.4, 0.4, 0.6), (2.5, 2.5, 3.5), "foliage ceramic soil", "potted plant", "pot"),
        ],
        "ground_plants": [
            ("flower_bed", "flowerbed.n.01", "a low bed of flowering plants",
             (0.5, 0.5, 0.1), (6.0, 10.0, 0.8), "foliage soil", "", "daisy"),
            ("ornamental_grass", "grass.n.01", "a clump of tall ornamental grass",
             (0.3, 0.3, 0.3), (2.0, 2.0, 2.0), "foliage", "", ""),
            ("grass_patch", "lawn.n.01", "a patch of mown grass",
             (0.5, 0.5, 0.01), (20.0, 20.0, 0.15), "foliage soil", "", ""),
        ],
        "potted_plants": [
            ("potted_plant", "pot_plant.n.01", "a plant growing in a pot",
             (0.2, 0.2, 0.3), (1.5, 1.5, 2.5), "ceramic foliage soil", "potted plant", "pot"),
        ],
        "natural_elements": [
            ("boulder", "boulder.n.01", "a large rounded rock",
             (0.3, 0.3, 0.2), (4.0, 4.0, 2.5), "stone granite", "", "megalith"),
            ("tree_stump", "stump.n.01", "the base of a felled tree",
             (0.3, 0.3, 0.15), (1.5, 1.5, 1.2), "wood bark", "", ""),
            ("log", "log.n.01", "a felled tree trunk lying on the ground",
             (1.0, 0.2, 0.2), (8.0, 1.2, 1.2), "wood bark", "", ""),
        ],
    },
    "vehicles": {
        "cars": [
            ("sedan", "sedan.n.01", "a saloon car with a separate boot",
             (4.2, 1.65, 1.3), (5.3, 2.0, 1.6), "painted_metal glass rubber", "car", "cab,limousine"),
            ("hatchback", "hatchback.n.01", "a compact car with a rear lift gate",
             (3.4, 1.55, 1.35), (4.5, 1.9, 1.65), "painted_metal glass rubber", "car", "beach wagon"),
            ("suv", "sport_utility.n.01", "a tall sport-utility vehicle",
             (4.2, 1.75, 1.6), (5.3, 2.1, 2.0), "painted_metal glass rubber", "car,truck", "jeep"),
            ("station_wagon", "beach_wagon.n.01", "a car with an extended roof over the cargo area",
             (4.3, 1.7, 1.4), (5.1, 2.0, 1.65), "painted_metal glass rubber", "car", "beach wagon"),
            ("coupe", "coupe.n.01", "a low two-door car",
             (4.0, 1.7, 1.15), (4.9, 2.0, 1.45), "painted_metal glass rubber", "car", "sports car,racer"),
            ("convertible", "convertible.n.01", "a car with an open top",
             (3.9, 1.7, 1.0), (5.0, 2.0, 1.45), "painted_metal glass rubber leather", "car", "convertible"),
            ("taxi", "cab.n.03", "a taxi cab with a roof sign",
             (4.2, 1.65, 1.4), (5.3, 2.0, 1.9), "painted_metal glass rubber", "car", "cab"),
            ("police_car", "police_cruiser.n.01", "a police patrol car with a light bar",
             (4.2, 1.65, 1.4), (5.3, 2.1, 2.0), "painted_metal glass rubber", "car", "police van"),
            ("minivan", "minivan.n.01", "a tall family car with sliding doors",
             (4.4, 1.75, 1.6), (5.3, 2.05, 1.95), "painted_metal glass rubber", "car", "minivan"),
        ],
        "vans_and_light_trucks": [
            ("van", "van.n.05", "a box-shaped light commercial vehicle",
             (4.5, 1.8, 1.8), (7.0, 2.2, 2.9), "painted_metal glass rubber",
             "truck,car", "moving van,minibus"),
            ("pickup_truck", "pickup.n.01", "a light truck with an open cargo bed",
             (4.8, 1.75, 1.6), (6.4, 2.2, 2.1), "painted_metal glass rubber", "truck", "pickup"),
            ("ambulance", "ambulance.n.01", "a van-based emergency ambulance",
             (5.0, 1.9, 2.2), (7.5, 2.4, 3.2), "painted_metal glass rubber", "truck", "ambulance"),
        ],
        "heavy_trucks": [
            ("box_truck", "truck.n.01", "a rigid truck with an enclosed cargo box",
             (5.5, 2.0, 2.6), (10.0, 2.6, 4.0), "painted_metal aluminium glass rubber",
             "truck", "moving van,trailer truck"),
            ("garbage_truck", "garbage_truck.n.01", "a refuse collection truck",
             (6.5, 2.2, 2.8), (11.0, 2.6, 4.0), "painted_metal steel glass rubber", "truck", "garbage truck"),
            ("tow_truck", "tow_truck.n.01", "a truck with a towing boom",
             (5.5, 2.0, 2.3), (10.0, 2.6, 3.8), "painted_metal steel glass rubber", "truck", "tow truck"),
            ("fire_truck", "fire_engine.n.01", "a fire engine with ladders",
             (7.0, 2.3, 2.8), (12.0, 2.6, 4.0), "painted_metal steel glass rubber", "truck", "fire engine"),
            ("semi_truck", "trailer_truck.n.01", "a tractor unit with a semi-trailer",
             (12.0, 2.4, 3.5), (20.0, 2.6, 4.3), "painted_metal aluminium glass rubber",
             "truck", "trailer truck"),
        ],
        "buses_and_trams": [
            ("city_bus", "bus.n.01", "a low-floor urban transit bus",
             (9.0, 2.4, 2.8), (19.0, 2.6, 3.6), "painted_metal glass rubber", "bus", "trolleybus,minibus"),
            ("school_bus", "school_bus.n.01", "a yellow school bus",
             (8.0, 2.3, 2.8), (13.0, 2.6, 3.4), "painted_metal glass rubber", "bus", "school bus"),
            ("minibus", "minibus.n.01", "a small bus for up to about 20 passengers",
             (5.5, 1.9, 2.3), (8.5, 2.4, 3.2), "painted_metal glass rubber", "bus", "minibus"),
            ("double_decker_bus", "double-decker.n.02", "a bus with two passenger decks",
             (9.0, 2.4, 4.0), (13.0, 2.6, 4.6), "painted_metal glass rubber", "bus", "trolleybus"),
            ("tram", "streetcar.n.01", "a street-running rail vehicle",
             (12.0, 2.2, 3.0), (45.0, 2.7, 4.0), "painted_metal glass steel",
             "train", "streetcar,electric locomotive"),
            ("trolleybus", "trolleybus.n.01", "an electric bus fed by overhead wires",
             (10.0, 2.4, 3.0), (19.0, 2.6, 4.5), "painted_metal glass rubber", "bus", "trolleybus"),
        ],
        "motorcycles": [
            ("motorcycle", "motorcycle.n.01", "a motorbike",
             (1.8, 0.6, 1.0), (2.6, 1.0, 1.5), "painted_metal steel rubber leather",
             "motorcycle", "motor scooter,moped"),
            ("moped", "moped.n.01", "a light step-through motor scooter",
             (1.5, 0.55, 0.95), (2.1, 1.0, 1.4), "painted_metal plastic rubber",
             "motorcycle", "moped,motor scooter"),
        ],
        "special_vehicles": [
            ("golf_cart", "golf_cart.n.01", "a small open electric cart",
             (2.2, 1.1, 1.7), (3.2, 1.5, 2.1), "plastic painted_metal rubber fabric", "car", "golfcart"),
            ("forklift", "forklift.n.01", "a small industrial lift truck",
             (2.2, 1.0, 1.9), (4.0, 1.6, 3.0), "painted_metal steel rubber", "truck", "forklift"),
            ("street_sweeper", "street_cleaner.n.01", "a compact road-sweeping vehicle",
             (3.0, 1.2, 1.9), (6.5, 2.5, 3.2), "painted_metal glass rubber", "truck", "snowplow"),
        ],
        "trailers": [
            ("cargo_trailer", "trailer.n.04", "an unpowered box or flatbed trailer",
             (2.5, 1.3, 1.0), (8.0, 2.5, 3.5), "painted_metal steel rubber", "truck", "trailer truck"),
            ("caravan", "trailer.n.01", "a towed living trailer",
             (4.0, 2.0, 2.4), (8.5, 2.5, 3.2), "fibreglass aluminium glass rubber",
             "truck", "recreational vehicle,mobile home"),
        ],
    },
    "micromobility": {
        "bicycles": [
            ("bicycle", "bicycle.n.01", "a pedal bicycle",
             (1.4, 0.35, 0.8), (2.0, 0.8, 1.3), "aluminium steel rubber carbon_fibre",
             "bicycle", "mountain bike"),
            ("cargo_bike", "bicycle.n.01", "a bicycle with a cargo box",
             (2.0, 0.5, 0.9), (3.0, 1.0, 1.4), "aluminium steel rubber wood", "bicycle", "tricycle"),
            ("tandem_bicycle", "bicycle-built-for-two.n.01", "a bicycle for two riders",
             (2.2, 0.35, 0.9), (3.0, 0.8, 1.3), "aluminium steel rubber", "bicycle", "bicycle-built-for-two"),
        ],
        "scooters": [
            ("kick_scooter", "scooter.n.02", "a foot-propelled two-wheeled scooter",
             (0.7, 0.3, 0.7), (1.3, 0.7, 1.3), "aluminium rubber plastic", "", "motor scooter"),
            ("e_scooter", "scooter.n.02", "a shared electric stand-up scooter",
             (0.9, 0.35, 1.0), (1.4, 0.75, 1.35), "aluminium rubber plastic", "", "motor scooter"),
        ],
        "personal_mobility": [
            ("wheelchair", "wheelchair.n.01", "a manual wheelchair",
             (0.8, 0.55, 0.85), (1.2, 0.8, 1.05), "aluminium rubber fabric", "chair", ""),
            ("mobility_scooter", "scooter.n.01", "a four-wheeled mobility scooter",
             (1.1, 0.5, 0.9), (1.6, 0.8, 1.4), "plastic aluminium rubber", "", "golfcart"),
            ("stroller", "baby_buggy.n.01", "a pushchair for an infant",
             (0.7, 0.45, 0.9), (1.1, 0.7, 1.2), "aluminium fabric rubber", "", ""),
            ("skateboard", "skateboard.n.01", "a board on four small wheels",
             (0.7, 0.18, 0.08), (1.1, 0.3, 0.15), "wood rubber aluminium", "skateboard", ""),
        ],
        "carts_and_robots": [
            ("shopping_cart", "handcart.n.01", "a wheeled supermarket trolley",
             (0.8, 0.5, 0.9), (1.2, 0.7, 1.15), "steel plastic rubber", "", "shopping cart"),
            ("hand_truck", "hand_truck.n.01", "a two-wheeled upright dolly",
             (0.4, 0.4, 1.0), (0.8, 0.7, 1.5), "steel rubber", "", "barrow"),
            ("wheelbarrow", "wheelbarrow.n.01", "a one-wheeled tray barrow",
             (1.2, 0.55, 0.5), (1.7, 0.8, 0.8), "steel rubber wood", "", "barrow"),
            ("delivery_robot", "robot.n.01", "a six-wheeled sidewalk delivery robot",
             (0.6, 0.45, 0.5), (1.2, 0.8, 1.5), "plastic aluminium rubber", "", ""),
        ],
    },
    "buildings_and_structures": {
        "buildings": [
            ("residential_building", "apartment_building.n.01", "a multi-storey apartment block",
             (8.0, 8.0, 6.0), (40.0, 60.0, 60.0), "brick concrete glass stone", "", ""),
            ("commercial_building", "building.n.01",
             "a building with shops at street level and offices above",
             (8.0, 8.0, 4.0), (40.0, 60.0, 40.0), "concrete glass stone brick", "", "grocery store,bookshop"),
            ("office_tower", "office_building.n.01", "a tall glazed office tower",
             (15.0, 15.0, 30.0), (60.0, 60.0, 250.0), "glass steel concrete", "", ""),
            ("house", "house.n.01", "a detached house with a pitched roof",
             (6.0, 6.0, 3.5), (16.0, 20.0, 12.0), "brick wood concrete ceramic glass", "", ""),
            ("warehouse", "warehouse.n.01", "a large single-storey storage building",
             (15.0, 20.0, 5.0), (80.0, 120.0, 15.0), "painted_metal concrete steel", "", "barn"),
        ],
        "facades": [
            ("building_facade", "facade.n.01", "the street front of a building, shallow in depth",
             (0.5, 6.0, 4.0), (3.0, 40.0, 40.0), "brick concrete glass stone", "", ""),
            ("shop_front", "storefront.n.01", "a ground-floor shop front with display windows and a sign",
             (0.3, 3.0, 3.0), (2.0, 15.0, 6.0), "glass aluminium wood", "", "toyshop,shoe shop,bakery"),
        ],
        "small_buildings": [
            ("shed", "shed.n.01", "a small single-room outbuilding",
             (1.5, 1.5, 1.8), (6.0, 8.0, 4.0), "wood painted_metal", "", "boathouse"),
            ("garage", "garage.n.01", "a building for parking a car",
             (5.0, 3.0, 2.2), (8.0, 7.0, 4.5), "brick concrete painted_metal", "", ""),
            ("public_toilet", "public_toilet.n.01", "a freestanding public toilet cabin",
             (1.5, 1.5, 2.3), (5.0, 6.0, 3.5), "painted_metal concrete steel", "toilet", ""),
            ("guard_booth", "booth.n.02", "a small glazed guard or ticket booth",
             (1.2, 1.2, 2.2), (3.0, 3.0, 3.2), "painted_metal glass", "", ""),
        ],
        "structural_elements": [
            ("freestanding_wall", "wall.n.01", "a freestanding garden or boundary wall",
             (0.15, 1.0, 0.4), (1.0, 12.0, 3.5), "brick stone concrete", "", "stone wall"),
            ("column", "column.n.07", "a freestanding pillar",
             (0.3, 0.3, 2.0), (1.5, 1.5, 10.0), "stone concrete marble", "", "pedestal"),
            ("archway", "arch.n.04", "a freestanding arch over a path",
             (0.4, 2.0, 2.5), (3.0, 12.0, 10.0), "stone brick steel", "", "triumphal arch"),
        ],
        "bridges_and_towers": [
            ("footbridge", "footbridge.n.01", "a pedestrian bridge",
             (2.0, 8.0, 1.5), (6.0, 60.0, 10.0), "steel concrete wood", "", "steel arch bridge,viaduct"),
            ("water_tower", "water_tower.n.01", "an elevated water tank on legs",
             (4.0, 4.0, 10.0), (20.0, 20.0, 50.0), "steel concrete", "", "water tower"),
        ],
    },
    "barriers": {
        "fences": [
            ("picket_fence", "picket_fence.n.01", "a fence of pointed vertical boards",
             (0.15, 1.5, 0.6), (0.8, 5.0, 1.6), "wood", "", "picket fence"),
            ("chainlink_fence", "chainlink_fence.n.01", "a wire-mesh fence panel between steel posts",
             (0.05, 1.5, 1.0), (1.0, 5.0, 3.2), "steel", "", "chainlink fence"),
            ("railing", "railing.n.01", "a metal pedestrian guard rail",
             (0.05, 1.0, 0.8), (0.8, 5.0, 1.4), "steel painted_metal cast_iron", "", "bannister"),
            ("wooden_fence", "fence.n.01", "a close-boarded wooden fence panel",
             (0.1, 1.5, 0.9), (0.8, 4.0, 2.2), "wood", "", "worm fence"),
            ("construction_fence", "fence.n.01", "a temporary mesh fence panel on concrete feet",
             (0.5, 2.0, 1.8), (1.0, 4.0, 2.3), "steel concrete", "", "chainlink fence"),
        ],
        "bollards": [
            ("bollard", "bollard.n.01", "a short post stopping vehicles",
             (0.1, 0.1, 0.5), (1.0, 1.0, 1.3), "steel cast_iron concrete stainless_steel granite",
             "", "pole"),
            ("flexible_bollard", "bollard.n.01", "a flexible plastic lane-separation post",
             (0.15, 0.15, 0.45), (0.4, 0.4, 1.2), "hdpe rubber", "", ""),
        ],
        "traffic_barriers": [
            ("jersey_barrier", "jersey_barrier.n.01", "a concrete or plastic lane barrier block",
             (0.4, 1.0, 0.6), (0.9, 4.0, 1.2), "concrete hdpe", "", ""),
            ("guardrail", "guardrail.n.01", "a steel road-side W-beam barrier",
             (0.2, 2.0, 0.6), (0.8, 8.0, 1.0), "steel", "", ""),
            ("crowd_barrier", "barrier.n.01", "a portable steel crowd-control barrier",
             (0.4, 1.8, 0.9), (0.8, 2.8, 1.3), "steel", "", ""),
            ("barricade", "barricade.n.01", "a striped A-frame or plank road barricade",
             (0.4, 1.0, 0.8), (1.0, 3.0, 1.6), "hdpe wood steel", "", ""),
        ],
        "temporary_traffic_control": [
            ("traffic_cone", "traffic_cone.n.01", "an orange cone with reflective bands",
             (0.25, 0.25, 0.3), (0.6, 0.6, 1.1), "plastic rubber", "", ""),
            ("traffic_drum", "drum.n.04", "an orange and white channelising drum",
             (0.45, 0.45, 0.8), (0.7, 0.7, 1.2), "hdpe rubber", "", "barrel"),
            ("delineator_post", "post.n.04", "a striped post on a heavy rubber base",
             (0.3, 0.3, 0.8), (0.6, 0.6, 1.4), "hdpe rubber", "", ""),
            ("water_filled_barrier", "barrier.n.01", "a hollow plastic barrier filled with water",
             (0.4, 1.0, 0.5), (0.7, 2.2, 1.1), "hdpe water", "", ""),
        ],
        "gates_and_access": [
            ("boom_barrier", "boom.n.04", "a pivoting arm barrier with a housing",
             (0.3, 2.5, 0.9), (0.8, 8.0, 1.6), "steel aluminium", "", ""),
            ("turnstile", "turnstile.n.01", "a rotating-arm pedestrian gate",
             (0.5, 0.6, 0.9), (1.6, 1.6, 2.4), "stainless_steel", "", "turnstile"),
            ("gate", "gate.n.01", "a gate leaf between two posts",
             (0.15, 1.0, 0.9), (1.0, 6.0, 2.5), "steel wood painted_metal", "", ""),
        ],
    },
    "utilities": {
        "water": [
            ("fire_hydrant", "fireplug.n.01", "a street fire-fighting water outlet",
             (0.25, 0.25, 0.5), (0.6, 0.6, 1.2), "cast_iron painted_metal", "fire hydrant", ""),
            ("standpipe", "standpipe.n.01", "a dry riser or standpipe outlet on a post",
             (0.2, 0.2, 0.6), (0.6, 0.6, 1.2), "cast_iron painted_metal", "fire hydrant", ""),
        ],
        "electrical": [
            ("utility_cabinet", "cabinet.n.01", "a roadside electrical or telecom cabinet",
             (0.3, 0.5, 0.8), (1.0, 2.5, 1.8), "painted_metal steel", "", ""),
            ("transformer_box", "transformer.n.01", "a pad-mounted distribution transformer",
             (1.0, 1.0, 1.0), (2.5, 2.5, 2.2), "painted_metal concrete", "", ""),
            ("utility_pole", "utility_pole.n.01", "a wooden or concrete pole carrying overhead lines",
             (0.5, 1.2, 7.0), (1.5, 3.0, 14.0), "wood concrete steel", "", "pole"),
            ("ev_charger", "charger.n.02", "an electric-vehicle charging post",
             (0.25, 0.3, 1.0), (0.8, 1.0, 2.0), "plastic painted_metal", "", "gas pump"),
        ],
        "telecom": [
            ("phone_booth", "telephone_booth.n.01", "a glazed telephone kiosk",
             (0.9, 0.9, 2.2), (1.3, 1.3, 2.9), "painted_metal cast_iron glass", "", "pay-phone"),
            ("payphone", "pay-phone.n.01", "a wall-less payphone on a pedestal",
             (0.3, 0.4, 1.5), (0.8, 1.2, 2.4), "stainless_steel aluminium", "", "pay-phone"),
        ],
        "postal": [
            ("mailbox", "mailbox.n.01", "a public mail collection box on legs",
             (0.4, 0.4, 0.9), (0.8, 0.8, 1.5), "painted_metal", "", "mailbox"),
            ("pillar_box", "pillar_box.n.01", "a cylindrical red post box",
             (0.4, 0.4, 1.2), (0.8, 0.8, 1.8), "cast_iron painted_metal", "", "mailbox"),
            ("parcel_locker", "locker.n.01", "a bank of automated parcel lockers",
             (0.5, 1.5, 1.7), (1.0, 6.0, 2.4), "painted_metal plastic", "", ""),
        ],
        "parking_equipment": [
            ("parking_meter", "parking_meter.n.01", "a coin or card meter on a post",
             (0.15, 0.2, 1.1), (0.5, 0.6, 1.7), "steel painted_metal", "parking meter", "parking meter"),
            ("pay_station", "machine.n.01", "a multi-space parking pay station",
             (0.3, 0.4, 1.4), (0.8, 0.8, 2.2), "stainless_steel painted_metal",
             "parking meter", "parking meter"),
        ],
        "monitoring": [
            ("cctv_pole", "surveillance_camera.n.01", "a pole with surveillance cameras",
             (0.4, 0.4, 3.0), (1.5, 1.5, 10.0), "steel plastic", "", "pole"),
            ("emergency_call_box", "call_box.n.01", "a pedestal emergency intercom",
             (0.2, 0.2, 1.0), (0.6, 0.6, 2.8), "painted_metal", "", "pay-phone"),
        ],
    },
    "street_life": {
        "people": [
            ("pedestrian", "pedestrian.n.01", "a standing adult person",
             (0.2, 0.35, 1.45), (0.5, 0.75, 2.05), "fabric leather", "person", ""),
            ("child", "child.n.01", "a standing child",
             (0.15, 0.25, 0.8), (0.4, 0.55, 1.45), "fabric", "person", ""),
        ],
        "animals": [
            ("dog", "dog.n.01", "a dog",
             (0.3, 0.15, 0.25), (1.3, 0.45, 0.9), "fabric", "dog", "Labrador retriever"),
            ("cat", "cat.n.01", "a domestic cat",
             (0.3, 0.1, 0.2), (0.6, 0.25, 0.4), "fabric", "cat", "tabby"),
            ("pigeon", "pigeon.n.01", "a street pigeon",
             (0.15, 0.06, 0.1), (0.4, 0.15, 0.35), "fabric", "bird", ""),
        ],
        "personal_items": [
            ("suitcase", "bag.n.06", "a wheeled suitcase",
             (0.2, 0.35, 0.5), (0.4, 0.55, 1.1), "plastic aluminium fabric", "suitcase", ""),
            ("backpack", "backpack.n.01", "a backpack set down on the ground",
             (0.15, 0.25, 0.35), (0.4, 0.45, 0.7), "fabric", "backpack", "backpack"),
            ("handheld_umbrella", "umbrella.n.01", "an open handheld umbrella",
             (0.8, 0.8, 0.6), (1.4, 1.4, 1.1), "fabric steel", "umbrella", "umbrella"),
        ],
        "goods_and_containers": [
            ("cardboard_box", "carton.n.02", "a cardboard shipping box",
             (0.15, 0.15, 0.1), (1.2, 1.2, 1.0), "cardboard", "", "carton"),
            ("wooden_crate", "crate.n.01", "a slatted wooden crate",
             (0.3, 0.3, 0.2), (1.2, 1.2, 1.0), "wood", "", "crate"),
            ("pallet", "pallet.n.02", "a wooden shipping pallet",
             (0.8, 1.0, 0.1), (1.25, 1.25, 0.2), "wood", "", ""),
            ("barrel", "barrel.n.02", "a steel or plastic drum barrel",
             (0.4, 0.4, 0.6), (0.8, 0.8, 1.1), "steel hdpe wood", "", "barrel,rain barrel"),
            ("plastic_crate", "crate.n.01", "a stackable plastic crate",
             (0.3, 0.3, 0.2), (0.8, 0.6, 1.2), "plastic", "", "crate"),
        ],
        "play_and_sport": [
            ("swing_set", "swing.n.02", "a frame with hanging swing seats",
             (1.5, 2.0, 1.8), (3.0, 6.0, 3.0), "steel wood rubber", "", "swing"),
            ("playground_slide", "slide.n.04", "a children's slide with steps",
             (2.0, 0.5, 1.2), (5.0, 1.2, 3.0), "hdpe steel", "", ""),
            ("basketball_hoop", "basketball_hoop.n.01", "a hoop and backboard on a weighted stand",
             (1.0, 0.9, 2.5), (3.0, 2.0, 4.0), "steel plastic glass", "sports ball", ""),
            ("spring_rider", "rocking_horse.n.01", "a playground rocker on a spring",
             (0.5, 0.25, 0.6), (1.2, 0.6, 1.2), "hdpe steel", "", ""),
            ("seesaw", "teeter-totter.n.01", "a pivoted plank seating two children",
             (2.5, 0.3, 0.4), (4.5, 1.0, 1.1), "steel wood hdpe", "", ""),
        ],
    },
    "ground_features": {
        "covers_and_drains": [
            ("manhole_cover", "manhole_cover.n.01", "a round or square cast-iron access cover",
             (0.5, 0.5, 0.01), (1.2, 1.2, 0.06), "cast_iron", "", "manhole cover"),
            ("storm_drain_grate", "grate.n.01", "a grated street drain inlet",
             (0.3, 0.4, 0.01), (0.8, 1.5, 0.06), "cast_iron", "", "manhole cover"),
            ("tree_grate", "grate.n.01", "a cast-iron grate around a street tree",
             (0.8, 0.8, 0.01), (2.0, 2.0, 0.06), "cast_iron", "", ""),
        ],
        "level_changes": [
            ("stairs", "stairs.n.01", "a flight of outdoor steps",
             (0.5, 0.8, 0.3), (6.0, 8.0, 4.0), "concrete stone granite", "", ""),
            ("ramp", "ramp.n.01", "an inclined walkway",
             (1.0, 0.8, 0.1), (12.0, 4.0, 1.2), "concrete asphalt", "", ""),
            ("curb_ramp", "ramp.n.01", "a dropped kerb ramp",
             (0.6, 1.0, 0.05), (1.5, 3.0, 0.2), "concrete", "", ""),
            ("speed_bump", "speed_bump.n.01", "a raised hump across a road",
             (0.3, 2.0, 0.05), (4.0, 8.0, 0.15), "asphalt rubber", "", ""),
        ],
        "surface_patches": [
            ("tactile_paving", "paving.n.01", "a patch of tactile warning paving",
             (0.3, 0.3, 0.005), (1.5, 4.0, 0.03), "concrete plastic", "", ""),
            ("puddle", "puddle.n.01", "a shallow pool of water on the ground",
             (0.3, 0.3, 0.002), (4.0, 4.0, 0.03), "water", "", ""),
            ("gravel_patch", "gravel.n.01", "a patch of loose gravel",
             (0.5, 0.5, 0.01), (6.0, 6.0, 0.1), "stone", "", ""),
        ],
    },
}
# fmt: on


def _build() -> dict[str, TaxonomyClass]:
    out: dict[str, TaxonomyClass] = {}
    for l1, l2s in _TREE.items():
        for l2, entries in l2s.items():
            for l3, synset, definition, smin, smax, mats, coco, imnet in entries:
                if l3 in out:
                    raise ValueError(f"taxonomy: duplicate L3 class {l3!r}")
                out[l3] = TaxonomyClass(
                    l1=l1,
                    l2=l2,
                    l3=l3,
                    synset=synset,
                    definition=definition,
                    size_min=tuple(float(x) for x in smin),
                    size_max=tuple(float(x) for x in smax),
                    materials=tuple(mats.split()),
                    coco=tuple(s for s in coco.split(",") if s),
                    imagenet=tuple(s for s in imnet.split(",") if s),
                )
    return out


#: Every L3 class, keyed by its snake_case name.
TAXONOMY: dict[str, TaxonomyClass] = _build()


def get_class(l3: str) -> TaxonomyClass:
    """The L3 class named ``l3``; raises ``ValueError`` naming close matches when unknown."""
    try:
        return TAXONOMY[l3]
    except KeyError:
        close = difflib.get_close_matches(l3, list(TAXONOMY), n=5, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown taxonomy class {l3!r}{hint}") from None


def classes_for_label(label: str, source: Literal["coco", "imagenet"]) -> list[TaxonomyClass]:
    """L3 classes linked to a detector label (``source`` "coco" or "imagenet"), in taxonomy order."""
    if source not in ("coco", "imagenet"):
        raise ValueError(f"label source must be 'coco' or 'imagenet', got {source!r}")
    key = label.strip().lower()
    return [c for c in TAXONOMY.values() if key in (s.lower() for s in getattr(c, source))]


def l1_names() -> list[str]:
    """L1 class names in taxonomy order."""
    return list(_TREE)


def l2_names() -> list[str]:
    """L2 class names in taxonomy order (unique across L1)."""
    return [l2 for l2s in _TREE.values() for l2 in l2s]
