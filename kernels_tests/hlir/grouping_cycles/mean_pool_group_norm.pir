{
    (%0) = "pd_op.data" () {dtype:float32,name:"x0",place:Place(undefined:0),shape:[1,1,1,1]} : () -> tensor<1x1x1x1xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[1,2]} : () -> tensor<2xi64>
    (%2) = "pd_op.mean" (%0, %1) {keepdim:true} : (tensor<1x1x1x1xf32>, tensor<2xi64>) -> tensor<1x1x1x1xf32>
    (%3) = "pd_op.sigmoid" (%2) {} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
    (%4) = "pd_op.multiply" (%0, %3) {} : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[1,1]} : () -> tensor<2xi64>
    (%6) = "pd_op.pool2d" (%0, %5) {adaptive:false,ceil_mode:false,data_format:"NCHW",exclusive:true,global_pooling:true,padding_algorithm:"EXPLICIT",paddings:[0,0],pooling_type:"max",strides:[1,1]} : (tensor<1x1x1x1xf32>, tensor<2xi64>) -> tensor<1x1x1x1xf32>
    (%7, %8, %9) = "pd_op.group_norm" (%0, <<NULL VALUE>>, <<NULL VALUE>>) {data_format:"NCHW",epsilon:1e-05,groups:1} : (tensor<1x1x1x1xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<1x1x1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>
    (%10) = "pd_op.hardswish" (%2) {} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
    (%11) = "pd_op.fetch" (%4) {col:0,name:"out0"} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
    (%12) = "pd_op.fetch" (%6) {col:1,name:"out1"} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
    (%13) = "pd_op.fetch" (%7) {col:2,name:"out2"} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
    (%14) = "pd_op.fetch" (%10) {col:3,name:"out3"} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
}
