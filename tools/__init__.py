"""Tooling of the repository that is not part of the product: it is not packaged into the wheel
(``[tool.hatch.build.targets.wheel]`` packages only ``src/glimmer``)."""
