{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[32,100],stop_gradient:[true]} : () -> tensor<32x100xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%2) = "pd_op.max" (%0, %1) {keepdim:true,stop_gradient:[true]} : (tensor<32x100xf32>, tensor<1xi64>) -> tensor<32x1xf32>
    (%3) = "pd_op.subtract" (%0, %2) {stop_gradient:[true]} : (tensor<32x100xf32>, tensor<32x1xf32>) -> tensor<32x100xf32>
    (%4) = "pd_op.exp" (%3) {stop_gradient:[true]} : (tensor<32x100xf32>) -> tensor<32x100xf32>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%6) = "pd_op.sum" (%4, %5) {dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<32x100xf32>, tensor<1xi64>) -> tensor<32x1xf32>
    (%7) = "pd_op.divide" (%4, %6) {stop_gradient:[true]} : (tensor<32x100xf32>, tensor<32x1xf32>) -> tensor<32x100xf32>
}
