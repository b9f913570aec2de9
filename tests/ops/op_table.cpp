#include "ops/op_table.h"

namespace pelab::testing {

namespace {
using D = Domain;
}  // namespace

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> c;
    // ---- shape and copies --------------------------------------------------------------
    c.push_back({"contiguous/transposed", {{3, 4}},
                 [](const TensorList& x) { return contiguous(transpose(x[0], 0, 1)); }});
    c.push_back({"clone/basic", {{2, 3}}, [](const TensorList& x) { return clone(x[0]); }});
    c.push_back({"reshape/infer", {{2, 3, 4}},
                 [](const TensorList& x) { return reshape(x[0], {4, -1}); }});
    c.push_back({"reshape/of_transposed", {{3, 5}},
                 [](const TensorList& x) { return reshape(transpose(x[0], 0, 1), {15}); }});
    c.push_back({"transpose/3d", {{2, 3, 4}},
                 [](const TensorList& x) { return contiguous(transpose(x[0], 0, 2)); }});
    c.push_back({"permute/4d", {{2, 3, 1, 5}},
                 [](const TensorList& x) { return contiguous(permute(x[0], {3, 0, 2, 1})); }});
    c.push_back({"slice/middle", {{3, 6}},
                 [](const TensorList& x) { return contiguous(slice(x[0], 1, 2, 5)); }});
    c.push_back({"slice/whole_and_negative_axis", {{2, 3, 4}},
                 [](const TensorList& x) { return contiguous(slice(x[0], -1, 0, 4)); }});
    c.push_back({"concat/middle_axis", {{2, 1, 3}, {2, 4, 3}},
                 [](const TensorList& x) { return concat({x[0], x[1]}, 1); }});
    c.push_back({"concat/last_axis_three", {{2, 2}, {2, 3}, {2, 1}},
                 [](const TensorList& x) { return concat({x[0], x[1], x[2]}, -1); }});
    c.push_back({"broadcast_to/rows", {{1, 4}},
                 [](const TensorList& x) { return contiguous(broadcast_to(x[0], {3, 4})); }});
    c.push_back({"sum_to/rows_and_lead", {{2, 3, 4}},
                 [](const TensorList& x) { return sum_to(x[0], {1, 4}); }});

    // ---- binary, with broadcasting and odd shapes ----------------------------------------
    for (const char* op : {"add", "sub", "mul", "div"}) {
      const std::string name(op);
      auto f = [name](const Tensor& a, const Tensor& b) {
        if (name == "add") return add(a, b);
        if (name == "sub") return sub(a, b);
        if (name == "mul") return mul(a, b);
        return div(a, b);
      };
      const std::vector<D> dom = name == "div" ? std::vector<D>{D::Any, D::Positive}
                                               : std::vector<D>{};
      c.push_back({name + "/same", {{3, 5}, {3, 5}},
                   [f](const TensorList& x) { return f(x[0], x[1]); }, dom});
      c.push_back({name + "/row", {{2, 3, 5}, {5}},
                   [f](const TensorList& x) { return f(x[0], x[1]); }, dom});
      c.push_back({name + "/column", {{4, 1}, {4, 7}},
                   [f](const TensorList& x) { return f(x[0], x[1]); }, dom});
      c.push_back({name + "/both_ways", {{3, 1, 2}, {1, 4, 1}},
                   [f](const TensorList& x) { return f(x[0], x[1]); }, dom});
      c.push_back({name + "/scalar", {{2, 3}, {}},
                   [f](const TensorList& x) { return f(x[0], x[1]); }, dom});
      c.push_back({name + "/size_one", {{1}, {1}},
                   [f](const TensorList& x) { return f(x[0], x[1]); }, dom});
      c.push_back({name + "/strided", {{5, 3}, {3, 5}},
                   [f](const TensorList& x) { return f(transpose(x[0], 0, 1), x[1]); }, dom});
    }
    c.push_back({"add_scalar/basic", {{2, 3}},
                 [](const TensorList& x) { return add_scalar(x[0], 0.7f); }});
    c.push_back({"mul_scalar/basic", {{2, 3}},
                 [](const TensorList& x) { return mul_scalar(x[0], -1.5f); }});

    // ---- unary ----------------------------------------------------------------------------
    c.push_back({"neg/basic", {{7}}, [](const TensorList& x) { return neg(x[0]); }});
    c.push_back({"exp/basic", {{3, 4}}, [](const TensorList& x) { return exp(x[0]); }});
    c.push_back({"log/basic", {{3, 4}}, [](const TensorList& x) { return log(x[0]); },
                 {D::Positive}});
    c.push_back({"sin/basic", {{3, 4}}, [](const TensorList& x) { return sin(x[0]); }});
    c.push_back({"cos/basic", {{3, 4}}, [](const TensorList& x) { return cos(x[0]); }});
    c.push_back({"sqrt/basic", {{3, 4}}, [](const TensorList& x) { return sqrt(x[0]); },
                 {D::Positive}});
    c.push_back({"square/basic", {{3, 4}}, [](const TensorList& x) { return square(x[0]); }});
    c.push_back({"abs/basic", {{3, 4}}, [](const TensorList& x) { return abs(x[0]); },
                 {D::AwayFromKink}});
    c.push_back({"tanh/basic", {{3, 4}}, [](const TensorList& x) { return tanh(x[0]); }});
    c.push_back({"relu/basic", {{3, 4}}, [](const TensorList& x) { return relu(x[0]); },
                 {D::AwayFromKink}});
    c.push_back({"gelu/basic", {{5, 7}}, [](const TensorList& x) { return gelu(x[0]); }});
    c.push_back({"gelu/strided", {{4, 3}},
                 [](const TensorList& x) { return gelu(transpose(x[0], 0, 1)); }});

    // ---- reductions -----------------------------------------------------------------------
    c.push_back({"sum/last", {{3, 4}}, [](const TensorList& x) { return sum(x[0], {-1}); }});
    c.push_back({"sum/first_keepdim", {{3, 4}},
                 [](const TensorList& x) { return sum(x[0], {0}, true); }});
    c.push_back({"sum/two_axes", {{2, 3, 4}},
                 [](const TensorList& x) { return sum(x[0], {0, 2}); }});
    c.push_back({"sum/size_one_axis", {{2, 1, 3}},
                 [](const TensorList& x) { return sum(x[0], {1}); }});
    c.push_back({"sum/strided", {{4, 3}},
                 [](const TensorList& x) { return sum(transpose(x[0], 0, 1), {1}); }});
    c.push_back({"mean/last", {{3, 5}}, [](const TensorList& x) { return mean(x[0], {1}); }});
    c.push_back({"mean/all_axes", {{2, 3, 2}},
                 [](const TensorList& x) { return mean(x[0], {0, 1, 2}); }});
    c.push_back({"sum_all/basic", {{3, 4}}, [](const TensorList& x) { return sum_all(x[0]); }});

    // ---- linear algebra (fast paths: oneDNN, OpenBLAS) -----------------------------------
    c.push_back({"matmul/2d", {{3, 4}, {4, 5}},
                 [](const TensorList& x) { return matmul(x[0], x[1]); }, {}, true});
    c.push_back({"matmul/odd", {{1, 7}, {7, 1}},
                 [](const TensorList& x) { return matmul(x[0], x[1]); }, {}, true});
    c.push_back({"matmul/batched", {{2, 3, 3, 4}, {2, 3, 4, 2}},
                 [](const TensorList& x) { return matmul(x[0], x[1]); }, {}, true});
    c.push_back({"matmul/shared_rhs", {{2, 3, 4}, {4, 5}},
                 [](const TensorList& x) { return matmul(x[0], x[1]); }, {}, true});
    c.push_back({"matmul/transposed_views", {{4, 3}, {5, 4}},
                 [](const TensorList& x) {
                   return matmul(transpose(x[0], 0, 1), transpose(x[1], 0, 1));
                 },
                 {}, true});
    c.push_back({"matmul/batched_transposed", {{2, 4, 3}, {2, 4, 5}},
                 [](const TensorList& x) { return matmul(transpose(x[0], 1, 2), x[1]); }, {},
                 true});
    c.push_back({"linear/bias", {{2, 3, 4}, {5, 4}, {5}},
                 [](const TensorList& x) { return linear(x[0], x[1], x[2]); }, {}, true});
    c.push_back({"linear/no_bias", {{6, 4}, {3, 4}},
                 [](const TensorList& x) { return linear(x[0], x[1], Tensor()); }, {}, true});
    c.push_back({"linear/one_row", {{1, 5}, {2, 5}, {2}},
                 [](const TensorList& x) { return linear(x[0], x[1], x[2]); }, {}, true});
    return c;
  }();
  return cases;
}

}  // namespace pelab::testing
