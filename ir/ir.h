#pragma once

// Everything a user of the IR needs: nodes, builder, op registry.
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/error.h"
#include "ir/expr.h"
#include "ir/function.h"
#include "ir/node.h"
#include "ir/op_registry.h"
#include "ir/stmt.h"
#include "ir/type.h"
