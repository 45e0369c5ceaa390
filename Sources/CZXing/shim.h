#pragma once
// zxing-cpp's headers are C++ and are included by the CZXingShim target only; this module carries the
// compiler and linker flags of zxing-cpp 3.1.1 as scripts/install-deps installs it (pkg-config verify-pipeline-zxing).
