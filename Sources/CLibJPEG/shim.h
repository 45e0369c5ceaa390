#pragma once
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
