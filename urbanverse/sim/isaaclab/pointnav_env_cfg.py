"""Isaac Lab configuration of ``Isaac-UrbanVerse-PointNav-Wheeled-v0`` (imports isaaclab: Isaac only).

Scene, per environment ``i`` at its own origin: its own copy of scene ``i % M`` (the environment
layer of ``scenes``: the scene's PhysicsScene and lights switched off), a Jetbot, a contact sensor
on its bodies and a RayCaster LiDAR. Stage-wide: the LiDAR's scan walls (``/World/ScanWalls``, one
invisible mesh of what the batched LiDAR sees in every environment), a sky and a sun light.
Observations (in the batched environment's order, ``spec.observation_layout``): LiDAR / max range,
goal vector, route waypoint, body velocity, last clamped action. Actions: normalised (forward
speed, yaw rate). Rewards, terminations and episode starts: the batched environment's, through
``mdp``. Every value comes from ``spec.PointNavSpec.from_environment()``.
"""

from __future__ import annotations

import isaaclab.envs.mdp as base_mdp
import isaaclab.sim as sim_utils
from isaaclab.actuators import ImplicitActuatorCfg
from isaaclab.assets import ArticulationCfg, AssetBaseCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.sensors import ContactSensorCfg, RayCasterCfg
from isaaclab.utils import configclass
from isaaclab.utils.assets import ISAAC_NUCLEUS_DIR

from urbanverse.sim.isaaclab import mdp
from urbanverse.sim.isaaclab.spec import PointNavSpec

#: Jetbot wheel radius and wheel base (m), the values of Isaac Sim's Jetbot differential-controller examples.
JETBOT_WHEEL_RADIUS = 0.03
JETBOT_WHEEL_BASE = 0.1125
#: Height (m) of the LiDAR above the chassis origin (the scan walls span every height).
LIDAR_HEIGHT = 0.1

JETBOT_CFG = ArticulationCfg(
    prim_path="{ENV_REGEX_NS}/Robot",
    spawn=sim_utils.UsdFileCfg(
        usd_path=f"{ISAAC_NUCLEUS_DIR}/Robots/NVIDIA/Jetbot/jetbot.usd", activate_contact_sensors=True
    ),
    init_state=ArticulationCfg.InitialStateCfg(pos=(0.0, 0.0, 0.05)),
    actuators={
        "wheels": ImplicitActuatorCfg(joint_names_expr=[".*_wheel_joint"], stiffness=None, damping=None)
    },
)


@configclass
class UrbanSceneCfg(InteractiveSceneCfg):
    """Per-environment scene copies, the robot and its sensors, the scan walls and the lights."""

    street = AssetBaseCfg(
        prim_path="{ENV_REGEX_NS}/Street", spawn=sim_utils.MultiUsdFileCfg(usd_path=[], random_choice=False)
    )
    scan_walls = AssetBaseCfg(prim_path="/World/ScanWalls", spawn=sim_utils.UsdFileCfg(usd_path=""))
    robot: ArticulationCfg = JETBOT_CFG
    contact_forces = ContactSensorCfg(prim_path="{ENV_REGEX_NS}/Robot/.*", history_length=1)
    lidar = RayCasterCfg(
        prim_path="{ENV_REGEX_NS}/Robot/chassis",
        offset=RayCasterCfg.OffsetCfg(pos=(0.0, 0.0, LIDAR_HEIGHT)),
        ray_alignment="base",
        mesh_prim_paths=["/World/ScanWalls"],
        pattern_cfg=mdp.BeamPatternCfg(angles=[]),
        max_distance=10.0,
    )
    sky = AssetBaseCfg(prim_path="/World/Sky", spawn=sim_utils.DomeLightCfg(intensity=1000.0))
    sun = AssetBaseCfg(prim_path="/World/Sun", spawn=sim_utils.DistantLightCfg(intensity=3000.0, angle=0.5))


@configclass
class ActionsCfg:
    drive = mdp.VelocityCommandActionCfg(
        asset_name="robot",
        joint_names=["left_wheel_joint", "right_wheel_joint"],
        wheel_radius=JETBOT_WHEEL_RADIUS,
        wheel_base=JETBOT_WHEEL_BASE,
    )


@configclass
class ObservationsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        """The policy's vector, in ``nav_state.OBSERVATION_TERMS`` order."""

        lidar = ObsTerm(func=mdp.lidar, params={"sensor_cfg": SceneEntityCfg("lidar"), "max_range": 10.0})
        goal_b = ObsTerm(func=mdp.goal_b, params={"command_name": "goal"})
        route_b = ObsTerm(func=mdp.route_b, params={"command_name": "goal", "radius": 1.0})
        velocity_b = ObsTerm(func=mdp.velocity_b, params={"asset_cfg": SceneEntityCfg("robot")})
        last_action = ObsTerm(func=mdp.last_action, params={"action_name": "drive"})

        def __post_init__(self) -> None:
            self.concatenate_terms = True

    policy: PolicyCfg = PolicyCfg()


@configclass
class CommandsCfg:
    goal: mdp.UrbanNavCommandCfg = None


@configclass
class RewardsCfg:
    """One term per non-zero weight of the spec's ``RewardsCfg``, named as there."""

    arrival: RewTerm = None
    collision: RewTerm = None
    position_coarse: RewTerm = None
    position_fine: RewTerm = None
    velocity: RewTerm = None
    progress: RewTerm = None


@configclass
class TerminationsCfg:
    time_out = DoneTerm(func=base_mdp.time_out, time_out=True)
    success = DoneTerm(func=mdp.goal_reached, params={"command_name": "goal"})
    collision: DoneTerm = None


@configclass
class UrbanVersePointNavWheeledEnvCfg(ManagerBasedRLEnvCfg):
    """Point-goal navigation of a Jetbot over UrbanVerse scenes (``$URBANVERSE_ISAAC_SCENES``)."""

    scene: UrbanSceneCfg = UrbanSceneCfg(num_envs=64, env_spacing=50.0, replicate_physics=False)
    actions: ActionsCfg = ActionsCfg()
    observations: ObservationsCfg = ObservationsCfg()
    commands: CommandsCfg = CommandsCfg()
    rewards: RewardsCfg = RewardsCfg()
    terminations: TerminationsCfg = TerminationsCfg()

    def __post_init__(self) -> None:
        spec = PointNavSpec.from_environment()
        envs = spec.env_scenes()
        self.scene.num_envs = spec.num_envs
        self.scene.env_spacing = envs.env_spacing
        self.scene.street.spawn.usd_path = [str(p) for p in envs.env_layers]
        self.scene.scan_walls.spawn.usd_path = str(envs.scan_walls)
        self.scene.lidar.pattern_cfg.angles = list(spec.lidar.beam_angles())
        self.scene.lidar.max_distance = spec.lidar.max_range
        self.sim.dt = spec.physics_dt
        self.decimation = spec.decimation
        self.sim.render_interval = spec.decimation
        self.episode_length_s = spec.episode_length_s
        self.scene.contact_forces.update_period = spec.physics_dt
        self.commands.goal = mdp.UrbanNavCommandCfg(
            asset_name="robot",
            spec_json=spec.to_json(),
            centres=envs.centres.tolist(),
            origins=envs.origins.tolist(),
            resampling_time_range=(1e9, 1e9),
        )
        policy = self.observations.policy
        policy.lidar.params["max_range"] = spec.lidar.max_range
        if spec.task.route_waypoint_m > 0:
            policy.route_b.params["radius"] = spec.task.route_waypoint_m
        else:
            policy.route_b = None
        hit = {
            "sensor_cfg": SceneEntityCfg("contact_forces", body_names="chassis"),
            "threshold": spec.collision_force,
        }
        for name in spec.rewards.weights():
            term = RewTerm(
                func=mdp.task_reward,
                weight=spec.isaac_weight(name),
                params={"command_name": "goal", "term": name, **hit},
            )
            setattr(self.rewards, name, term)
        if spec.task.terminate_on_collision:
            self.terminations.collision = DoneTerm(func=mdp.collided, params=hit)
