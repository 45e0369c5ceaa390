#pragma once
#include <webp/decode.h>
