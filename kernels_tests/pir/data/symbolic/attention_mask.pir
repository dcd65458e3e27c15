{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1,16],stop_gradient:[false]} : () -> tensor<-1x-1x16xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"mask",place:Place(undefined:0),shape:[-1,1,-1,-1],stop_gradient:[false]} : () -> tensor<-1x1x-1x-1xf32>
    (%2) = "pd_op.shape64" (%0) {stop_gradient:[true]} : (tensor<-1x-1x16xf32>) -> tensor<3xi64>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0]} : () -> tensor<1xi64>
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%5) = "pd_op.slice" (%2, %3, %4) {axes:[0],decrease_axis:[0],infer_flags:[1],stop_gradient:[true]} : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<i64>
    (%6) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%7) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[2]} : () -> tensor<1xi64>
    (%8) = "pd_op.slice" (%2, %6, %7) {axes:[0],decrease_axis:[0],infer_flags:[1],stop_gradient:[true]} : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<i64>
    (%9) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[],stop_gradient:[true],value:2} : () -> tensor<i64>
    (%10) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[],stop_gradient:[true],value:8} : () -> tensor<i64>
    (%11) = "builtin.combine" (%5, %8, %9, %10) {stop_gradient:[true]} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> vec[tensor<i64>,tensor<i64>,tensor<i64>,tensor<i64>]
    (%12) = "pd_op.stack" (%11) {axis:0,stop_gradient:[true]} : (vec[tensor<i64>,tensor<i64>,tensor<i64>,tensor<i64>]) -> tensor<4xi64>
    (%13) = "pd_op.reshape" (%0, %12) {stop_gradient:[false]} : (tensor<-1x-1x16xf32>, tensor<4xi64>) -> tensor<-1x-1x2x8xf32>
    (%14) = "pd_op.transpose" (%13) {perm:[0,2,1,3],stop_gradient:[false]} : (tensor<-1x-1x2x8xf32>) -> tensor<-1x2x-1x8xf32>
    (%15) = "pd_op.matmul" (%14, %14) {stop_gradient:[false],transpose_x:false,transpose_y:true} : (tensor<-1x2x-1x8xf32>, tensor<-1x2x-1x8xf32>) -> tensor<-1x2x-1x-1xf32>
    (%16) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:0.353553} : () -> tensor<1xf32>
    (%17) = "pd_op.scale" (%15, %16) {bias:0,bias_after_scale:true,stop_gradient:[false]} : (tensor<-1x2x-1x-1xf32>, tensor<1xf32>) -> tensor<-1x2x-1x-1xf32>
    (%18) = "pd_op.add" (%17, %1) {stop_gradient:[false]} : (tensor<-1x2x-1x-1xf32>, tensor<-1x1x-1x-1xf32>) -> tensor<-1x2x-1x-1xf32>
    (%19) = "pd_op.softmax" (%18) {axis:-1,stop_gradient:[false]} : (tensor<-1x2x-1x-1xf32>) -> tensor<-1x2x-1x-1xf32>
    (%20) = "pd_op.matmul" (%19, %14) {stop_gradient:[false],transpose_x:false,transpose_y:false} : (tensor<-1x2x-1x-1xf32>, tensor<-1x2x-1x8xf32>) -> tensor<-1x2x-1x8xf32>
    (%21) = "pd_op.transpose" (%20) {perm:[0,2,1,3],stop_gradient:[false]} : (tensor<-1x2x-1x8xf32>) -> tensor<-1x-1x2x8xf32>
    (%22) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0,0,16]} : () -> tensor<3xi64>
    (%23) = "pd_op.reshape" (%21, %22) {stop_gradient:[false]} : (tensor<-1x-1x2x8xf32>, tensor<3xi64>) -> tensor<-1x-1x16xf32>
}
