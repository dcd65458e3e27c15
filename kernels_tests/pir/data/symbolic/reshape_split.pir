{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1,6],stop_gradient:[false]} : () -> tensor<-1x-1x6xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0,-1,4]} : () -> tensor<3xi64>
    (%2) = "pd_op.reshape" (%0, %1) {stop_gradient:[false]} : (tensor<-1x-1x6xf32>, tensor<3xi64>) -> tensor<-1x-1x4xf32>
    (%3) = "pd_op.relu" (%2) {stop_gradient:[false]} : (tensor<-1x-1x4xf32>) -> tensor<-1x-1x4xf32>
}
