{
    (%0) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"mixed_0.w_2",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<f32>
    (%1) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"mixed_0.w_1",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<2xbf16>
    (%2) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"mixed_0.w_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<4x2xf16>
    (%3) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,4],stop_gradient:[false]} : () -> tensor<-1x4xf32>
    (%4) = "pd_op.data" () {dtype:int64,name:"ids",place:Place(undefined:0),shape:[-1],stop_gradient:[false]} : () -> tensor<-1xi64>
    (%5) = "pd_op.cast" (%2) {dtype:float32,stop_gradient:[false]} : (tensor<4x2xf16>) -> tensor<4x2xf32>
    (%6) = "pd_op.matmul" (%3, %5) {stop_gradient:[false],transpose_x:false,transpose_y:false} : (tensor<-1x4xf32>, tensor<4x2xf32>) -> tensor<-1x2xf32>
    (%7) = "pd_op.cast" (%1) {dtype:float32,stop_gradient:[false]} : (tensor<2xbf16>) -> tensor<2xf32>
    (%8) = "pd_op.multiply" (%7, %0) {stop_gradient:[false]} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    (%9) = "pd_op.add" (%6, %8) {stop_gradient:[false]} : (tensor<-1x2xf32>, tensor<2xf32>) -> tensor<-1x2xf32>
    (%10) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xi32>
    (%11) = "pd_op.split_with_num" (%9, %10) {num:2,stop_gradient:[false]} : (tensor<-1x2xf32>, tensor<1xi32>) -> vec[tensor<-1x1xf32>,tensor<-1x1xf32>]
    (%12, %13) = "builtin.split" (%11) {stop_gradient:[false,false]} : (vec[tensor<-1x1xf32>,tensor<-1x1xf32>]) -> tensor<-1x1xf32>, tensor<-1x1xf32>
    (%14) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xi32>
    (%15) = "builtin.combine" (%13, %12) {stop_gradient:[false]} : (tensor<-1x1xf32>, tensor<-1x1xf32>) -> vec[tensor<-1x1xf32>,tensor<-1x1xf32>]
    (%16) = "pd_op.concat" (%15, %14) {stop_gradient:[false]} : (vec[tensor<-1x1xf32>,tensor<-1x1xf32>], tensor<1xi32>) -> tensor<-1x2xf32>
    (%17, %18, %19) = "pd_op.layer_norm" (%3, <<NULL VALUE>>, <<NULL VALUE>>) {begin_norm_axis:1,epsilon:1e-05,stop_gradient:[false,false,false]} : (tensor<-1x4xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<-1x4xf32>, tensor<-1xf32>, tensor<-1xf32>
    (%20) = "pd_op.cast" (%4) {dtype:float32,stop_gradient:[false]} : (tensor<-1xi64>) -> tensor<-1xf32>
    (%21) = "pd_op.fetch" (%16) {col:0,name:"fetch_name_0",persistable:[true],stop_gradient:[false]} : (tensor<-1x2xf32>) -> tensor<-1x2xf32>
    (%22) = "pd_op.fetch" (%17) {col:1,name:"fetch_name_1",persistable:[true],stop_gradient:[false]} : (tensor<-1x4xf32>) -> tensor<-1x4xf32>
    (%23) = "pd_op.fetch" (%20) {col:2,name:"fetch_name_2",persistable:[true],stop_gradient:[false]} : (tensor<-1xf32>) -> tensor<-1xf32>
}
