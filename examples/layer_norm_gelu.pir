{
    (%0) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"layer_norm_0.b_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<256xf32>
    (%1) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"layer_norm_0.w_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<256xf32>
    (%2) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,256],stop_gradient:[true]} : () -> tensor<-1x256xf32>
    (%3, %4, %5) = "pd_op.layer_norm" (%2, %1, %0) {begin_norm_axis:1,epsilon:1e-05,stop_gradient:[false,false,false],struct_name:"/LayerNorm/"} : (tensor<-1x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<-1x256xf32>, tensor<-1xf32>, tensor<-1xf32>
    (%6) = "pd_op.gelu" (%3) {approximate:false,stop_gradient:[false]} : (tensor<-1x256xf32>) -> tensor<-1x256xf32>
}
