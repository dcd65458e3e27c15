{
    (%0) = "pd_op.data" () {dtype:float32,name:"x0",place:Place(undefined:0),shape:[1,1]} : () -> tensor<1x1xf32>
    (%1, %2, %3) = "pd_op.layer_norm" (%0, <<NULL VALUE>>, <<NULL VALUE>>) {begin_norm_axis:1,epsilon:1e-05} : (tensor<1x1xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<1x1xf32>, tensor<1xf32>, tensor<1xf32>
    (%4) = "pd_op.softmax" (%1) {axis:0} : (tensor<1x1xf32>) -> tensor<1x1xf32>
    (%5) = "pd_op.softmax" (%0) {axis:1} : (tensor<1x1xf32>) -> tensor<1x1xf32>
}
