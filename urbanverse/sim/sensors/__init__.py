"""Batched sensors (Isaac Lab pattern: ``XxxCfg``, ``Xxx``, ``XxxData`` per sensor)."""

from urbanverse.sim.sensors.depth_camera import DepthCamera
from urbanverse.sim.sensors.depth_camera_cfg import DepthCameraCfg
from urbanverse.sim.sensors.depth_camera_data import DepthCameraData
from urbanverse.sim.sensors.lidar import Lidar
from urbanverse.sim.sensors.lidar_cfg import LidarCfg
from urbanverse.sim.sensors.lidar_data import LidarData
from urbanverse.sim.sensors.rgb_camera_cfg import RgbAugmentCfg, RgbCameraCfg
from urbanverse.sim.sensors.rgb_camera_data import RgbCameraData

# RgbCamera itself loads the renderers (MuJoCo, OpenGL): import it from ``sensors.rgb_camera``.
__all__ = [
    "DepthCamera",
    "DepthCameraCfg",
    "DepthCameraData",
    "Lidar",
    "LidarCfg",
    "LidarData",
    "RgbAugmentCfg",
    "RgbCameraCfg",
    "RgbCameraData",
]
