// ATen/ATen.h for glasstorch: the same surface as torch/extension.h.
#pragma once
#include <torch/extension.h>
